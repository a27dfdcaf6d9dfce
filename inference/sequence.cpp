#include "inference/sequence.h"

#include <algorithm>
#include <chrono>

namespace hearth::inference {

result<prefill_stats> prefill(engine & eng, sequence & seq, std::span<const token_id> prompt,
                              std::vector<float> & logits, bool reuse) {
    if (prompt.empty()) return fail("prefill: the prompt is empty");
    if (static_cast<int64_t>(prompt.size()) > seq.cache.n_ctx())
        return fail("prefill: the prompt has ", prompt.size(), " tokens, more than the context of ", seq.cache.n_ctx());
    const auto t0 = std::chrono::steady_clock::now();

    size_t common = 0;
    if (reuse) {
        const size_t limit = std::min(seq.tokens.size(), prompt.size());
        while (common < limit && seq.tokens[common] == prompt[common]) ++common;
        if (common == prompt.size()) --common;  // re-evaluate the last token for its logits
    }
    seq.cache.set_n_pos(static_cast<int32_t>(common));
    seq.tokens.resize(common);

    auto rest = prompt.subspan(common);
    if (auto s = eng.eval(seq.cache, rest, logits); !s) {
        seq.cache.set_n_pos(static_cast<int32_t>(common));  // eval checks before it writes
        return s.error();
    }
    seq.tokens.insert(seq.tokens.end(), rest.begin(), rest.end());

    prefill_stats st;
    st.n_prompt = static_cast<int32_t>(prompt.size());
    st.n_reused = static_cast<int32_t>(common);
    st.n_evaluated = static_cast<int32_t>(rest.size());
    st.t_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return st;
}

status decode_one(engine & eng, sequence & seq, token_id tok, std::vector<float> & logits) {
    const token_id one[1] = {tok};
    if (auto s = eng.eval(seq.cache, one, logits); !s) return s;
    seq.tokens.push_back(tok);
    return {};
}

}  // namespace hearth::inference
