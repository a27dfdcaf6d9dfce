// trace_replay: drives the engine through an editing trace (daemon/bench/edit_trace.h) the way the
// daemon serves an editor: one KV slot per document, the FIM window on the line grid, the
// completion rules and suffix trimming; optionally the suggestion memory (typed ahead,
// prefetched after an accept). Records, for every completion, the tokens reused and
// evaluated, the time to first token and the total time.
// Thread-safety: single-threaded apart from the kernels' pool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "daemon/bench/edit_trace.h"
#include "inference/loaded_model.h"

namespace hearth::daemon {

struct replay_options {
    bool reuse = true;          // keep each document's slot; off: every completion is cold
    int32_t chunk_min = 0;      // > 0: chunk reuse after the common prefix (inference::prefill_options)
    bool typed_ahead = false;   // answer from the suggestion memory when the typed text extends it
    bool prefetch = false;      // after each suggestion, compute the one that follows its accept
    int32_t slots_per_document = 1;   // KV slots a document may hold (session_cache::pick_slot)
    int32_t n_predict = 16;
    int32_t prefix_lines = 64;
    int32_t suffix_lines = 16;
};

struct replay_record {
    int32_t n_prompt = 0, n_reused = 0, n_shifted = 0, n_evaluated = 0;
    double ttft_ms = 0, total_ms = 0;
    std::string text;           // the suggestion shown (after trimming)
    bool from_memory = false;   // answered by the suggestion memory, no model run
    uint64_t doc_hash = 0;      // the document and cursor it was asked for
};

struct replay_result {
    std::vector<replay_record> completions;
    std::vector<double> prefetch_ms;   // background work while a suggestion is shown
};

result<replay_result> replay_trace(inference::loaded_model & lm, const std::vector<trace_event> & events,
                                   const replay_options & ro);

}  // namespace hearth::daemon
