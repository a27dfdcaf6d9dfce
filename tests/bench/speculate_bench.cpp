// Speculative decoding on real completions: the golden FIM cases (prefix, suffix and the middle
// removed from tests/golden/sources) built into prompts as `hearth complete` builds them, with
// its completion rule. Each case is prefilled once per model (the draft too, as a warm slot
// would hold it), then generated with every mode from copies, several times; printed per mode:
// the median over the repetitions of generated tokens / generation time, the guesses kept and
// the tokens per target pass. Every mode's text is checked against speculation off. Then what a
// verifying batch of k tokens costs against one decode step (the median of the repetitions),
// which bounds what a guess may cost.
//   hearth_speculate_bench MODEL [--draft DRAFT] [--reps N] [--cache-type T] [--threads N] [-n N]
#include <boost/json.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "inference/decode/completion_rules.h"
#include "inference/decode/draft_model.h"
#include "inference/decode/generate.h"
#include "inference/load/loaded_model.h"
#include "inference/prompt/fim.h"

using namespace hearth;
using namespace hearth::inference;

namespace {

struct mode_total {
    speculation_stats st;      // summed over the cases (first repetition)
    int32_t n_tokens = 0;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// eval_steps of k tokens after a 256-token context, against one decode step, each measured reps
// times, alternating.
void print_verify_cost(engine & eng, const kv_types & type, int reps) {
    std::vector<token_id> ctx(256);
    for (size_t i = 0; i < ctx.size(); ++i) ctx[i] = static_cast<token_id>(1000 + 37 * i % 20000);
    sequence seq(eng.make_cache(type, 512));
    std::vector<float> logits;
    if (!prefill(eng, seq, ctx, logits)) return;
    const int32_t n0 = seq.cache.n_pos();
    std::printf("\nverify batch of k tokens / one decode step (%d repetitions, median):\n", reps);
    std::vector<double> one;
    for (int k : {1, 2, 4, 8, 16}) {
        std::vector<double> ms_k;
        for (int r = 0; r < reps; ++r) {
            const std::vector<token_id> batch(ctx.begin(), ctx.begin() + k);
            seq.cache.set_n_pos(n0);
            auto t0 = std::chrono::steady_clock::now();
            (void)eng.eval(seq.cache, std::span(batch.data(), 1), logits);
            one.push_back(ms_since(t0));
            seq.cache.set_n_pos(n0);
            t0 = std::chrono::steady_clock::now();
            (void)eng.eval_steps(seq.cache, batch, logits);
            ms_k.push_back(ms_since(t0));
        }
        std::printf("  k = %2d: %7.1f ms, %5.2f decode steps\n", k, median(ms_k), median(ms_k) / median(one));
    }
}

int usage() {
    std::fprintf(stderr, "usage: hearth_speculate_bench MODEL [--draft DRAFT] [--reps N] [--cache-type T] [--threads N] [-n N]\n");
    return 2;
}

}  // namespace

int main(int argc, char ** argv) {
    if (argc < 2) return usage();
    load_options lo;
    lo.model_path = argv[1];
    lo.n_ctx = 4096;
    std::string draft_path;
    int reps = 3, n_predict = 64;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) return usage();
        if (a == "--draft") draft_path = argv[++i];
        else if (a == "--reps") reps = std::stoi(argv[++i]);
        else if (a == "--cache-type") lo.cache_type = argv[++i];
        else if (a == "--threads") lo.n_threads = std::stoi(argv[++i]);
        else if (a == "-n") n_predict = std::stoi(argv[++i]);
        else return usage();
    }
    auto lm = loaded_model::load(lo);
    if (!lm) { std::fprintf(stderr, "%s\n", lm.message().c_str()); return 1; }
    std::unique_ptr<draft_model> draft;
    if (!draft_path.empty()) {
        auto d = draft_model::load(draft_path, (*lm)->vocab(), (*lm)->pool());
        if (!d) { std::fprintf(stderr, "%s\n", d.message().c_str()); return 1; }
        draft = std::move(*d);
    }
    std::ifstream in(std::string(HEARTH_SOURCE_DIR) + "/tests/golden/qwen2.5-coder-0.5b-instruct-q4_k_m/completions.json");
    std::stringstream ss;
    ss << in.rdbuf();
    const auto golden = boost::json::parse(ss.str());

    std::vector<speculate_mode> modes{speculate_mode::off, speculate_mode::lookup};
    if (draft) modes.insert(modes.end(), {speculate_mode::draft, speculate_mode::both});
    std::map<speculate_mode, mode_total> totals;
    std::vector<std::map<speculate_mode, double>> rep_ms(static_cast<size_t>(reps));
    double draft_prefill_ms = 0;
    auto & eng = (*lm)->eng();
    for (const auto & r : golden.at("results").as_array()) {
        if (r.at("kind").as_string() != "fim") continue;
        fim_input fi;
        fi.prefix = std::string(r.at("prefix").as_string());
        fi.suffix = std::string(r.at("suffix").as_string());
        fi.path = std::string(r.at("source").as_string());
        auto prompt = build_completion_prompt((*lm)->vocab(), fi);
        if (!prompt) { std::fprintf(stderr, "%s\n", prompt.message().c_str()); return 1; }
        generation_params params;
        params.n_predict = n_predict;
        params.rule = make_completion_rule(guess_line_mode(fi.prefix, fi.suffix), fi.prefix, fi.suffix);
        sequence seq(eng.make_cache((*lm)->cache_types(), (*lm)->n_ctx()));
        std::vector<float> logits;
        if (auto pf = prefill(eng, seq, *prompt, logits); !pf) { std::fprintf(stderr, "%s\n", pf.message().c_str()); return 1; }
        std::optional<sequence> draft_seq;
        if (draft) {
            draft_seq.emplace(draft->eng().make_cache((*lm)->cache_types(), (*lm)->n_ctx()));
            std::vector<float> dl;
            auto pf = prefill(draft->eng(), *draft_seq, *prompt, dl);
            if (!pf) { std::fprintf(stderr, "%s\n", pf.message().c_str()); return 1; }
            draft_prefill_ms += pf->t_ms;
        }
        std::string off_text;
        for (int rep = 0; rep < reps; ++rep) {
            for (const auto mode : modes) {
                sequence s = seq;
                std::vector<float> l = logits;
                std::optional<sequence> ds = draft_seq;
                params.speculation = make_speculation(mode, draft.get(), ds ? &*ds : nullptr);
                auto gen = generate(eng, (*lm)->vocab(), s, l, params);
                if (!gen) { std::fprintf(stderr, "%s\n", gen.message().c_str()); return 1; }
                if (mode == speculate_mode::off) off_text = gen->text;
                else if (gen->text != off_text) {
                    std::fprintf(stderr, "%s: mode %s changed the text\n", std::string(r.at("name").as_string()).c_str(),
                                 std::string(speculate_mode_name(mode)).c_str());
                    return 1;
                }
                rep_ms[static_cast<size_t>(rep)][mode] += gen->t_ms;
                if (rep == 0) {
                    auto & t = totals[mode];
                    t.n_tokens += static_cast<int32_t>(gen->tokens.size());
                    t.st.n_drafted += gen->speculation.n_drafted;
                    t.st.n_accepted += gen->speculation.n_accepted;
                    t.st.n_rejected += gen->speculation.n_rejected;
                    t.st.n_target_passes += gen->speculation.n_target_passes;
                    t.st.n_tokens += gen->speculation.n_tokens;
                    t.st.t_draft_ms += gen->speculation.t_draft_ms;
                    std::printf("%-28s %-6s %3zu tokens %8.1f ms  kept %3d, rejected %3d, computed %3d  passes %3d\n",
                                std::string(r.at("name").as_string()).c_str(), std::string(speculate_mode_name(mode)).c_str(),
                                gen->tokens.size(), gen->t_ms, gen->speculation.n_accepted, gen->speculation.n_rejected, gen->speculation.n_drafted,
                                gen->speculation.n_target_passes);
                }
            }
        }
    }
    std::printf("\nmodel %s, cache %s%s%s, %d repetitions\n", (*lm)->name().c_str(), lo.cache_type.c_str(),
                draft ? ", draft " : "", draft ? draft_path.c_str() : "", reps);
    if (draft) std::printf("draft prefill of the prompts (a warm slot holds it): %.0f ms in all\n", draft_prefill_ms);
    std::printf("%-7s %7s %10s %10s %9s %12s %10s\n", "mode", "tokens", "t/s (med)", "kept", "computed", "tok/pass", "draft ms");
    for (const auto mode : modes) {
        auto & t = totals[mode];
        std::vector<double> tps;
        for (auto & m : rep_ms) tps.push_back(t.n_tokens * 1000.0 / m[mode]);
        std::sort(tps.begin(), tps.end());
        const double med = tps[tps.size() / 2];
        std::printf("%-7s %7d %10.1f %9.1f%% %9d %12.2f %10.0f\n", std::string(speculate_mode_name(mode)).c_str(), t.n_tokens,
                    med, 100.0 * t.st.acceptance(), t.st.n_drafted, t.st.tokens_per_pass(), t.st.t_draft_ms);
    }
    print_verify_cost(eng, (*lm)->cache_types(), reps);
    return 0;
}
