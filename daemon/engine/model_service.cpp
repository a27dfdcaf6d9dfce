#include "daemon/engine/model_service.h"

namespace hearth::daemon {

std::string_view stop_reason_name(stop_reason r) {
    switch (r) {
        case stop_reason::end_of_generation: return "end_of_generation";
        case stop_reason::max_tokens: return "max_tokens";
        case stop_reason::time_budget: return "time_budget";
        case stop_reason::time_cap: return "time_cap";
        case stop_reason::stop_rule: return "stop_rule";
        case stop_reason::cancelled: return "cancelled";
    }
    return "unknown";
}

}  // namespace hearth::daemon
