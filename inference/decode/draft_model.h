// draft_model: a small model that guesses tokens for a larger one (speculate.h): its mapped file,
// weights and engine, on the target's thread pool (the two never run at once, so they share the
// cores), loaded only after its vocabulary is checked to be the target's token for token.
// Thread-safety: owned by the compute worker, like the target.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "inference/decode/speculate.h"
#include "inference/forward/engine.h"
#include "inference/gguf/gguf_file.h"
#include "inference/model/model.h"
#include "inference/session/sequence.h"
#include "inference/tokenizer/vocab.h"
#include "kernels/thread_pool.h"

namespace hearth::inference {

class draft_model {
public:
    // Errors: the file does not load, or its vocabulary differs from target_vocab (the first
    // differing token is named).
    static result<std::unique_ptr<draft_model>> load(const std::string & path, const tokenizer::vocab & target_vocab,
                                                     kernels::thread_pool & pool);

    engine & eng() { return *engine_; }
    const model & mdl() const { return model_; }

private:
    draft_model(gguf::gguf_file f, model m) : file_(std::move(f)), model_(std::move(m)) {}

    gguf::gguf_file file_;
    model model_;
    std::unique_ptr<engine> engine_;
};

// The options for generate() (generation_params::speculation) in one call: the mode, and the
// draft with its own sequence where the mode uses one (either may be null for lookup or off).
speculation_options make_speculation(speculate_mode mode, draft_model * draft, sequence * draft_seq);

}  // namespace hearth::inference
