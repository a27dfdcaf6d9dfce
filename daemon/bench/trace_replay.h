// trace_replay: feeds an editing trace (daemon/bench/edit_trace.h) to the daemon's completion
// pipeline (daemon/pipeline/completion_pipeline.h) as an editor would, one connection with
// its documents, and times every completion: the window, extra context, slot choice,
// prefill, generation, cleanup and suggestion memory are the daemon's own, by construction.
// Records, for every completion, the tokens reused and evaluated, the time to first token
// and the total time; the prefetches (the completion after an accept, computed while the
// suggestion is shown) are timed apart.
// Thread-safety: single-threaded apart from the kernels' pool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "daemon/bench/edit_trace.h"
#include "daemon/engine/model_service.h"
#include "daemon/settings/config.h"

namespace hearth::daemon {

struct replay_options {
    completion_settings settings;   // the daemon's completion settings (its defaults unless changed)
    bool cold = false;              // every completion from an empty KV slot (the document's slots released first)
};

struct replay_record {
    int32_t n_prompt = 0, n_reused = 0, n_shifted = 0, n_evaluated = 0;
    double ttft_ms = 0, total_ms = 0;
    std::string text;           // the suggestion shown (the first item; "" when none)
    bool from_memory = false;   // answered by the suggestion memory, no model run
    uint64_t doc_hash = 0;      // the document and cursor it was asked for
};

struct replay_result {
    std::vector<replay_record> completions;
    std::vector<double> prefetch_ms;   // background work while a suggestion is shown
};

// Replays the trace on `model` (a fresh pipeline, so no memory or context from an earlier
// replay); the documents' KV slots are released at the end, so replays do not share them.
result<replay_result> replay_trace(model_service & model, const std::vector<trace_event> & events,
                                   const replay_options & ro);

}  // namespace hearth::daemon
