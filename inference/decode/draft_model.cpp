#include "inference/decode/draft_model.h"

namespace hearth::inference {

result<std::unique_ptr<draft_model>> draft_model::load(const std::string & path, const tokenizer::vocab & target_vocab,
                                                       kernels::thread_pool & pool) {
    auto file = gguf::gguf_file::open(path);
    if (!file) return fail("draft model ", path, ": ", file.message());
    auto voc = tokenizer::load_vocab(*file);
    if (!voc) return fail("draft model ", path, ": ", voc.message());
    if (voc->n_tokens() != target_vocab.n_tokens())
        return fail("draft model ", path, ": its vocabulary has ", voc->n_tokens(), " tokens, the model's ",
                    target_vocab.n_tokens(), "; a draft must share the vocabulary");
    for (token_id t = 0; t < voc->n_tokens(); ++t)
        if (voc->piece(t, true) != target_vocab.piece(t, true))
            return fail("draft model ", path, ": token ", t, " is '", voc->piece(t, true), "' where the model has '",
                        target_vocab.piece(t, true), "'; a draft must share the vocabulary");
    auto mdl = model::load(*file);
    if (!mdl) return fail("draft model ", path, ": ", mdl.message());
    if (mdl->hp().n_vocab != voc->n_tokens())
        return fail("draft model ", path, ": the tokenizer has ", voc->n_tokens(), " tokens but token_embd.weight has ",
                    mdl->hp().n_vocab, " rows");
    // model holds pointers into the mapping, which moves with the gguf_file object but not in memory.
    std::unique_ptr<draft_model> d(new draft_model(std::move(*file), std::move(*mdl)));
    d->engine_ = std::make_unique<engine>(d->model_, pool);
    return d;
}

speculation_options make_speculation(speculate_mode mode, draft_model * draft, sequence * draft_seq) {
    speculation_options o;
    o.mode = mode;
    o.draft = draft ? &draft->eng() : nullptr;
    o.draft_seq = draft_seq;
    return o;
}

}  // namespace hearth::inference
