#include "inference/decode/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace hearth::inference {

status validate(const sampler_params & p) {
    if (!(p.temperature >= 0.0f) || p.temperature > 100.0f) return fail("sampler: temperature ", p.temperature, " is outside [0, 100]");
    if (p.top_k < 0) return fail("sampler: top_k ", p.top_k, " is negative (0 turns it off)");
    if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) return fail("sampler: top_p ", p.top_p, " is outside (0, 1]");
    if (!(p.min_p >= 0.0f && p.min_p < 1.0f)) return fail("sampler: min_p ", p.min_p, " is outside [0, 1)");
    if (!(p.repeat_penalty > 0.0f) || p.repeat_penalty > 10.0f) return fail("sampler: repeat_penalty ", p.repeat_penalty, " is outside (0, 10]");
    if (!std::isfinite(p.presence_penalty)) return fail("sampler: presence_penalty is not a finite number");
    if (p.penalty_window < 0 || p.penalty_window > 1 << 16) return fail("sampler: penalty_window ", p.penalty_window, " is outside [0, 65536]");
    return {};
}

sampler::sampler(sampler_params params) : params_(params), rng_(params.seed) {}

void sampler::reset() {
    recent_.clear();
    rng_.seed(params_.seed);
}

void sampler::accept(token_id tok) {
    if (params_.penalty_window == 0) return;
    recent_.push_back(tok);
    while (recent_.size() > static_cast<size_t>(params_.penalty_window)) recent_.pop_front();
}

token_id sampler::argmax(std::span<const float> logits) {
    token_id best = 0;
    float best_v = -std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < logits.size(); ++i) {
        if (logits[i] > best_v) {  // strict: the lowest id wins a tie
            best_v = logits[i];
            best = static_cast<token_id>(i);
        }
    }
    return best;
}

void sampler::apply_penalties(std::span<float> logits) const {
    if (recent_.empty() || (params_.repeat_penalty == 1.0f && params_.presence_penalty == 0.0f)) return;
    std::unordered_set<token_id> seen(recent_.begin(), recent_.end());
    for (token_id t : seen) {
        if (t < 0 || static_cast<size_t>(t) >= logits.size()) continue;
        float & l = logits[t];
        l = l > 0 ? l / params_.repeat_penalty : l * params_.repeat_penalty;
        l -= params_.presence_penalty;
    }
}

token_id sampler::sample(std::span<float> logits) {
    apply_penalties(logits);
    if (params_.temperature <= 0.0f) return argmax(logits);

    candidates_.clear();
    candidates_.reserve(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) candidates_.emplace_back(logits[i], static_cast<token_id>(i));
    auto by_logit = [](const auto & a, const auto & b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };

    size_t n = candidates_.size();
    if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < n) {
        n = static_cast<size_t>(params_.top_k);
        std::partial_sort(candidates_.begin(), candidates_.begin() + n, candidates_.end(), by_logit);
    } else {
        std::sort(candidates_.begin(), candidates_.end(), by_logit);
    }
    candidates_.resize(n);

    // Probabilities at temperature 1 decide the top-p / min-p cut, as llama.cpp's chain does
    // before its temperature step.
    const float max_l = candidates_[0].first;
    std::vector<double> p(n);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += p[i] = std::exp(static_cast<double>(candidates_[i].first - max_l));
    size_t keep = n;
    if (params_.top_p < 1.0f) {
        double acc = 0;
        for (size_t i = 0; i < n; ++i) {
            acc += p[i] / sum;
            if (acc >= params_.top_p) { keep = i + 1; break; }
        }
    }
    if (params_.min_p > 0.0f) {
        const double floor = params_.min_p * (p[0] / sum);
        size_t k = 1;
        while (k < keep && p[k] / sum >= floor) ++k;
        keep = k;
    }
    candidates_.resize(keep);

    std::vector<double> w(keep);
    for (size_t i = 0; i < keep; ++i)
        w[i] = std::exp(static_cast<double>(candidates_[i].first - max_l) / params_.temperature);
    std::discrete_distribution<size_t> pick(w.begin(), w.end());
    return candidates_[pick(rng_)].second;
}

}  // namespace hearth::inference
