#include "daemon/pipeline/chat_pipeline.h"

#include <algorithm>

namespace hearth::daemon {
namespace {

std::string fenced(std::string_view lang, std::string_view code) {
    std::string s = "```";
    s += lang;
    s += "\n";
    s += code;
    if (!code.empty() && code.back() != '\n') s += "\n";
    s += "```\n";
    return s;
}

std::string_view file_name(std::string_view uri) {
    const size_t slash = uri.rfind('/');
    return slash == std::string_view::npos ? uri : uri.substr(slash + 1);
}

}  // namespace

std::vector<chat_message> build_chat_messages(const chat_input & in, const std::string & system) {
    std::string user;
    const std::string where = in.uri.empty() ? std::string() : " from " + std::string(file_name(in.uri));
    const std::string & code = in.selection.empty() ? in.before : in.selection;
    switch (in.intent) {
        case chat_intent::explain:
            user = "Explain what this code" + where + " does.\n\n" + fenced(in.language_id, code);
            break;
        case chat_intent::fix:
            user = "Find the bug in this code" + where + " and fix it. Reply with the corrected code and one sentence on what was wrong.\n\n" +
                   fenced(in.language_id, code);
            break;
        case chat_intent::ask:
        case chat_intent::chat:
            user = in.prompt;
            if (!code.empty()) user += "\n\nThe code" + where + ":\n\n" + fenced(in.language_id, code);
            break;
    }
    if (!in.prompt.empty() && (in.intent == chat_intent::explain || in.intent == chat_intent::fix))
        user += "\n" + in.prompt + "\n";
    if (!in.selection.empty() && (!in.before.empty() || !in.after.empty())) {
        user += "\nFor context, the surrounding code:\n\n" +
                fenced(in.language_id, in.before + "<selection>\n" + in.after);
    }
    std::vector<chat_message> out;
    if (!system.empty()) out.push_back({"system", system});
    out.push_back({"user", std::move(user)});
    return out;
}

chat_input selection_of_lines(std::string_view text, int64_t first, int64_t last, int32_t context_lines) {
    // Offsets of each line's start, and one past the end.
    std::vector<size_t> starts{0};
    for (size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n' && i + 1 < text.size()) starts.push_back(i + 1);
    const auto n = static_cast<int64_t>(starts.size());
    auto start_of = [&](int64_t line) { return line >= n ? text.size() : starts[static_cast<size_t>(std::max<int64_t>(0, line))]; };
    first = std::clamp<int64_t>(first, 0, n);
    last = std::clamp<int64_t>(last, first, n);
    chat_input in;
    const size_t b = start_of(first), e = start_of(last + 1);
    in.selection = std::string(text.substr(b, e - b));
    const size_t ctx_b = start_of(first - context_lines), ctx_e = start_of(last + 1 + context_lines);
    in.before = std::string(text.substr(ctx_b, b - ctx_b));
    in.after = std::string(text.substr(e, ctx_e - e));
    return in;
}

chat_request chat_pipeline::request_for(const chat_input & in) const {
    chat_request req;
    req.uri = in.uri;
    req.messages = build_chat_messages(in, settings_.system_prompt);
    req.n_predict = settings_.max_tokens;
    req.time_budget = std::chrono::milliseconds(settings_.time_budget_ms);
    req.show_reasoning = settings_.show_reasoning;
    return req;
}

}  // namespace hearth::daemon
