#include "daemon/engine/fallback_model_service.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

namespace hearth::daemon {
namespace {

using clock = std::chrono::steady_clock;

double ms_since(clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); }

}  // namespace

fallback_model_service::fallback_model_service(std::unique_ptr<remote_model_service> remote, std::unique_ptr<model_service> local,
                                               std::chrono::milliseconds retry_after)
    : remote_(std::move(remote)), local_(std::move(local)), retry_after_(retry_after) {
    state_.kind = "remote";
    state_.remote_url = remote_->options().url;
    state_.remote_api = remote_->options().api == remote_api::openai ? "openai" : "llama-server";
    state_.serving = "remote";
}

bool fallback_model_service::skip_resting_remote() {
    if (!local_ || !remote_resting()) return false;
    std::lock_guard lock(mu_);
    state_.serving = "local";
    ++state_.fallbacks;
    return true;
}

bool fallback_model_service::remote_resting() const {
    std::lock_guard lock(mu_);
    return clock::now() < resting_until_;
}

bool fallback_model_service::record(bool ok, const std::string & error, double ms) {
    const sse_failure kind = remote_->last_failure();
    std::lock_guard lock(mu_);
    if (ok) {
        state_.serving = "remote";
        state_.last_failure.clear();
        state_.last_remote_ms = ms;
        ++state_.remote_answers;
        if (!last_logged_.empty()) spdlog::info("the remote engine {} answers again", state_.remote_url);
        last_logged_.clear();
        return false;
    }
    state_.last_error = error;
    state_.last_failure = std::string(sse_failure_name(kind));
    if (kind == sse_failure::unreachable) resting_until_ = clock::now() + retry_after_;
    if (state_.last_failure != last_logged_) {
        spdlog::warn("remote engine: {}{}", error, local_ ? "; the local model answers" : "");
        last_logged_ = state_.last_failure;
    }
    if (!local_) return false;
    state_.serving = "local";
    ++state_.fallbacks;
    return true;
}

result<completion> fallback_model_service::complete(const fim_request & req, std::stop_token stop, const piece_callback & on_piece) {
    if (skip_resting_remote()) return local_->complete(req, stop, on_piece);
    const auto t0 = clock::now();
    auto r = remote_->complete(req, stop, on_piece);
    if (r || remote_->last_failure() == sse_failure::cancelled || stop.stop_requested()) {
        if (r) record(true, {}, ms_since(t0));
        return r;
    }
    if (!record(false, r.message(), 0)) return r;
    return local_->complete(req, stop, on_piece);
}

result<chat_answer> fallback_model_service::chat(const chat_request & req, std::stop_token stop, const piece_callback & on_piece) {
    if (skip_resting_remote()) return local_->chat(req, stop, on_piece);
    const auto t0 = clock::now();
    bool streamed = false;
    auto r = remote_->chat(req, stop, [&](std::string_view piece) {
        streamed = true;
        if (on_piece) on_piece(piece);
    });
    if (r || remote_->last_failure() == sse_failure::cancelled || stop.stop_requested()) {
        if (r) record(true, {}, ms_since(t0));
        return r;
    }
    if (streamed) {   // the editor shows the remote's start: not restarted here
        std::lock_guard lock(mu_);
        state_.last_error = r.message();
        state_.last_failure = std::string(sse_failure_name(remote_->last_failure()));
        spdlog::warn("remote engine: {}", r.message());
        return r;
    }
    if (!record(false, r.message(), 0)) return r;
    return local_->chat(req, stop, on_piece);
}

void fallback_model_service::release_document(std::string_view uri) {
    if (local_) local_->release_document(uri);
}

model_status fallback_model_service::status() const {
    model_status s = local_ ? local_->status() : remote_->status();
    if (!local_) s.model_name = remote_->status().model_name;
    std::lock_guard lock(mu_);
    s.engine = state_;
    return s;
}

result<std::vector<int32_t>> fallback_model_service::tokenize(std::string_view text, bool add_special, bool parse_special) const {
    return local_ ? local_->tokenize(text, add_special, parse_special) : remote_->tokenize(text, add_special, parse_special);
}

result<std::string> fallback_model_service::detokenize(std::span<const int32_t> ids) const {
    return local_ ? local_->detokenize(ids) : remote_->detokenize(ids);
}

result<completion_prompt> fallback_model_service::completion_prompt_text(const fim_request & req) const {
    return local_ ? local_->completion_prompt_text(req) : model_service::completion_prompt_text(req);
}

result<std::unique_ptr<model_service>> make_remote_engine(const remote_settings & rs, std::unique_ptr<model_service> local) {
    remote_options o;
    o.url = rs.url;
    auto api = parse_remote_api(rs.api);
    if (!api) return api.error();
    o.api = *api;
    o.model = rs.model;
    o.first_piece_budget = std::chrono::milliseconds(rs.budget_ms);
    if (!rs.key_file.empty()) {
        std::ifstream f(rs.key_file);
        if (!f) return fail("remote-key-file '", rs.key_file, "': cannot be read");
        std::stringstream ss;
        ss << f.rdbuf();
        o.api_key = ss.str();
        while (!o.api_key.empty() && std::isspace(static_cast<unsigned char>(o.api_key.back()))) o.api_key.pop_back();
        if (o.api_key.empty()) return fail("remote-key-file '", rs.key_file, "' is empty");
        if (o.api_key.find_first_of("\r\n") != std::string::npos)
            return fail("remote-key-file '", rs.key_file, "': the key must be one line");
    }
    prompt_text_builder build;
    if (local) build = [lp = local.get()](const fim_request & req) { return lp->completion_prompt_text(req); };
    auto remote = std::make_unique<remote_model_service>(std::move(o), std::move(build));
    return std::unique_ptr<model_service>(std::make_unique<fallback_model_service>(std::move(remote), std::move(local)));
}

hearth::status fallback_model_service::persist() { return local_ ? local_->persist() : hearth::status{}; }

}  // namespace hearth::daemon
