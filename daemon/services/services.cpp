#include "daemon/services/services.h"

#include <boost/json/object.hpp>
#include <spdlog/spdlog.h>

#ifndef HEARTH_VERSION
#define HEARTH_VERSION "0.1.0"
#endif

namespace hearth::daemon {

services::services(std::shared_ptr<scheduler> sched, model_service * model, const daemon_config & cfg)
    : sched_(sched), model_(model), cfg_(cfg), completion_(sched, model, cfg.completion), chat_(sched, model, cfg.chat),
      next_edit_(sched, model, cfg.next_edit) {}

lsp::handlers services::make_handlers(uint64_t owner) {
    lsp::handlers h;
    h.on_initialize = [](const lsp::initialize_params & p, lsp::initialize_result & r) -> hearth::status {
        r.serverInfo.version = HEARTH_VERSION;
        if (p.clientInfo) spdlog::info("client: {} {}", p.clientInfo->name, p.clientInfo->version.value_or(""));
        return {};
    };
    h.on_shutdown = [this, owner] { sched_->cancel_owner(owner); };
    h.on_did_open = [this, owner](const lsp::document & d, const lsp::document_store & docs) {
        opened(owner, d.uri());
        completion_.document_opened(owner, d, docs);
    };
    h.on_cursor_rest = [this, owner](const lsp::document & d, const lsp::position & at, const lsp::document_store & docs) {
        completion_.warm_up(owner, d, at, docs);
        next_edit_.warm_up(owner, d, at);
    };
    h.on_did_change = [this, owner](const lsp::document & d) {
        completion_.document_changed(owner, d.uri());
        next_edit_.document_changed(owner, d.uri());
    };
    h.on_did_close = [this, owner](std::string_view uri) {
        completion_.document_changed(owner, uri);
        next_edit_.document_changed(owner, uri);
        completion_.forget_document(owner, uri);
        closed(owner, std::string(uri));
    };
    h.on_inline_completion = [this, owner](const lsp::inline_completion_params & p, const lsp::request_context & ctx,
                                           lsp::typed_responder<lsp::inline_completion_list> out) {
        completion_.handle(owner, p, ctx, std::move(out));
    };
    h.on_next_edit = [this, owner](const lsp::next_edit_params & p, const lsp::request_context & ctx,
                                   lsp::typed_responder<lsp::next_edit_result> out) {
        next_edit_.handle(owner, p, ctx, std::move(out));
    };
    h.on_chat = [this, owner](const lsp::chat_params & p, const lsp::request_context & ctx,
                              lsp::typed_responder<lsp::chat_result> out) { chat_.handle(owner, p, ctx, std::move(out)); };
    h.on_status = [this](const lsp::request_context & ctx, lsp::typed_responder<lsp::status_result> out) {
        auto s = status();
        out.reply(s);
    };
    h.on_did_show_completion = [this](const lsp::did_show_completion_params &) { ++feedback_.shown; };
    h.on_did_partially_accept_completion = [this](const lsp::did_partially_accept_completion_params &) {
        ++feedback_.partially_accepted;
    };
    h.on_did_accept = [this](const lsp::completion_feedback_params &) { ++feedback_.accepted; };
    h.on_did_reject = [this](const lsp::completion_feedback_params &) { ++feedback_.rejected; };
    return h;
}

lsp::status_result services::status() const {
    lsp::status_result s;
    s.version = HEARTH_VERSION;
    const auto st = sched_->stats();
    s.queueDepth = static_cast<uint32_t>(st.queued);
    s.lastCompletionMs = completion_.last_completion_ms();
    s.completionsShown = feedback_.shown.load();
    s.completionsAccepted = feedback_.accepted.load() + feedback_.partially_accepted.load();
    s.completionsRejected = feedback_.rejected.load();
    boost::json::object extra;
    if (model_) {
        // model_service::status() is a snapshot that never waits for a running generation.
        const model_status m = model_->status();
        s.model = m.model_name;
        s.modelPath = m.model_path;
        s.mappedBytes = m.mapped_bytes;
        s.kvBudgetBytes = m.kv_budget_bytes;
        s.kvUsedBytes = m.kv_used_bytes;
        s.cacheSlots = static_cast<uint32_t>(m.n_slots_max);
        s.cacheSlotsUsed = static_cast<uint32_t>(m.n_slots);
        s.promptTokensPerSecond = m.prompt_tokens_per_s;
        s.decodeTokensPerSecond = m.generate_tokens_per_s;
        extra["memoryLimitBytes"] = m.memory_limit_bytes;
        extra["memoryLimitSource"] = m.memory_limit_source;
        extra["architecture"] = m.architecture;
        extra["nextEditFormat"] = m.next_edit_format;
        extra["cacheType"] = m.cache_type;
        extra["contextLength"] = m.n_ctx;
        extra["threads"] = m.n_threads;
        extra["cacheTokensHeld"] = m.tokens_held;
        extra["cacheBytesPerSlot"] = m.n_slots > 0 ? m.kv_used_bytes / static_cast<uint64_t>(m.n_slots) : 0;
        extra["cacheHitRate"] = m.cache_requests > 0 ? static_cast<double>(m.cache_hits) / static_cast<double>(m.cache_requests) : 0.0;
        extra["cacheTokensReused"] = m.tokens_reused;
        extra["cacheTokensEvaluated"] = m.tokens_evaluated;
        extra["cacheEvictions"] = m.evictions;
        extra["slotsSaved"] = m.slots_saved;
        extra["slotsRestored"] = m.slots_restored;
        extra["slotsRejected"] = m.slots_rejected;
        extra["lastPromptTokens"] = m.last.n_prompt_tokens;
        extra["lastCachedTokens"] = m.last.n_cached_tokens;
        extra["lastGeneratedTokens"] = m.last.n_generated;
        extra["promptWindowsShortened"] = m.windows_shortened;
        extra["repeatedLinesRetried"] = m.repeats_retried;
        // What typing costs: positions computed per answered completion, the requests its
        // keystrokes cancelled included; and the background warm-ups (hearth/cursorRest, didOpen).
        extra["completionsAnswered"] = m.answers;
        extra["answerTokensEvaluated"] = m.answer_tokens_evaluated;
        extra["lastAnswerTokensEvaluated"] = m.last.n_burst_evaluated;
        extra["warmUps"] = m.warm_ups;
        extra["warmUpsSkipped"] = m.warm_ups_skipped;
        extra["warmUpTokens"] = m.warm_up_tokens;
        // Who computes: "local", or a remote engine and whether it answered the last request.
        const auto & e = m.engine;
        boost::json::object engine{{"kind", e.kind}, {"serving", e.serving}};
        if (e.kind == "remote") {
            engine["remoteUrl"] = e.remote_url;
            engine["remoteApi"] = e.remote_api;
            engine["lastError"] = e.last_error;
            engine["lastFailure"] = e.last_failure;
            engine["remoteAnswers"] = e.remote_answers;
            engine["fallbacks"] = e.fallbacks;
            engine["lastRemoteMs"] = e.last_remote_ms;
        }
        extra["engine"] = std::move(engine);
        // Where the layers run: the device, its layers and the bytes held there, or why the CPU.
        const auto & o = m.offload;
        extra["offload"] = boost::json::object{{"gpuLayers", o.gpu_layers},
                                               {"backend", o.backend},
                                               {"device", o.device},
                                               {"modelLayers", o.n_layer},
                                               {"layers", o.n_layers},
                                               {"firstLayer", o.n_layer - o.n_layers},
                                               {"deviceMemoryBytes", o.device_memory_bytes},
                                               {"deviceWeightBytes", o.weight_bytes},
                                               {"deviceKvBytes", o.kv_bytes},
                                               {"deviceBytes", o.weight_bytes + o.kv_bytes},
                                               {"plannedBytes", o.planned_bytes},
                                               {"plannedSlots", o.planned_slots},
                                               {"cpuReason", o.cpu_reason}};
    }
    extra["completionOutcomes"] = completion_.outcomes_json();
    extra["connections"] = connections_.load();
    extra["completionsServed"] = completion_.served();
    extra["completionsFromMemory"] = completion_.answered_from_memory();
    extra["completionsPrefetched"] = completion_.prefetched();
    extra["chatsServed"] = chat_.served();
    extra["nextEditsServed"] = next_edit_.served();
    extra["nextEditsPredicted"] = next_edit_.predicted();
    extra["lastNextEditMs"] = next_edit_.last_ms();
    extra["completionsPartiallyAccepted"] = feedback_.partially_accepted.load();
    extra["jobsRunning"] = st.running;
    extra["jobsStarted"] = st.ran;
    extra["jobsCancelledQueued"] = st.cancelled_queued;
    extra["jobsCancelledRunning"] = st.cancelled_running;
    extra["jobsSuperseded"] = st.superseded;
    extra["jobsPreempted"] = st.preempted;
    extra["jobsRejected"] = st.rejected;
    extra["lastQueueWaitMs"] = st.last_queue_wait_ms;
    s.extra = std::move(extra);
    return s;
}

void services::opened(uint64_t owner, const std::string & uri) {
    std::lock_guard lock(mu_);
    if (open_by_owner_[owner].insert(uri).second) ++open_count_[uri];
}

void services::closed(uint64_t owner, const std::string & uri) {
    {
        std::lock_guard lock(mu_);
        auto it = open_by_owner_.find(owner);
        if (it == open_by_owner_.end() || it->second.erase(uri) == 0) return;
        if (--open_count_[uri] != 0) return;
        open_count_.erase(uri);
    }
    release_if_unused(uri);
}

void services::release_if_unused(const std::string & uri) {
    if (!model_) return;
    // The KV slot belongs to the worker: release it there, behind whatever is queued.
    job j;
    j.priority = job_priority::background;
    j.run = [this, uri](std::stop_token) {
        {
            std::lock_guard lock(mu_);
            if (open_count_.count(uri)) return;   // reopened meanwhile
        }
        model_->release_document(uri);
    };
    if (auto id = sched_->submit(std::move(j)); !id) spdlog::debug("release of {} skipped: {}", uri, id.message());
}

void services::connection_closed(uint64_t owner) {
    sched_->cancel_owner(owner);
    completion_.forget_owner(owner);
    std::set<std::string> docs;
    {
        std::lock_guard lock(mu_);
        auto it = open_by_owner_.find(owner);
        if (it == open_by_owner_.end()) return;
        docs.swap(it->second);
        open_by_owner_.erase(it);
        for (const auto & d : docs) completion_.forget_document(owner, d);
        for (auto d = docs.begin(); d != docs.end();) {
            if (--open_count_[*d] == 0) {
                open_count_.erase(*d);
                ++d;
            } else {
                d = docs.erase(d);
            }
        }
    }
    for (const auto & uri : docs) release_if_unused(uri);
}

}  // namespace hearth::daemon
