// services: what one daemon offers every connection: the completion, chat and next-edit services,
// hearth/status, completion feedback counters, and the bookkeeping of which documents are
// open anywhere (a document closed in its last connection lets the engine free its KV
// slot). make_handlers() binds all of it to one connection (its owner id) as the typed
// handlers the lsp::server calls.
// Thread-safety: handlers run on their connection's strand; shared state is atomics or
// behind mu_; model work only ever runs on the scheduler's worker.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "daemon/services/chat_service.h"
#include "daemon/services/completion_service.h"
#include "daemon/services/next_edit_service.h"
#include "daemon/settings/config.h"
#include "daemon/engine/model_service.h"
#include "daemon/services/scheduler.h"
#include "lsp/server.h"

namespace hearth::daemon {

struct feedback_counters {
    std::atomic<uint64_t> shown{0};
    std::atomic<uint64_t> accepted{0};
    std::atomic<uint64_t> partially_accepted{0};
    std::atomic<uint64_t> rejected{0};
};

class services {
public:
    services(std::shared_ptr<scheduler> sched, model_service * model, const daemon_config & cfg);

    lsp::handlers make_handlers(uint64_t owner);
    // The connection is gone: its jobs are cancelled and its documents released.
    void connection_closed(uint64_t owner);
    void set_connections(size_t n) { connections_.store(n); }

    lsp::status_result status() const;
    const feedback_counters & feedback() const { return feedback_; }
    completion_service & completion() { return completion_; }

private:
    void opened(uint64_t owner, const std::string & uri);
    void closed(uint64_t owner, const std::string & uri);
    void release_if_unused(const std::string & uri);   // with mu_ NOT held

    std::shared_ptr<scheduler> sched_;
    model_service * model_;
    daemon_config cfg_;
    completion_service completion_;
    chat_service chat_;
    next_edit_service next_edit_;
    feedback_counters feedback_;
    std::atomic<size_t> connections_{0};

    mutable std::mutex mu_;
    std::map<uint64_t, std::set<std::string>> open_by_owner_;
    std::map<std::string, size_t> open_count_;
};

}  // namespace hearth::daemon
