#include "inference/chat_template.h"

namespace hearth::inference {

result<chat_format> parse_chat_format(std::string_view name) {
    if (name == "chatml") return chat_format::chatml;
    if (name == "gemma") return chat_format::gemma;
    if (name == "llama3") return chat_format::llama3;
    if (name == "llama2") return chat_format::llama2;
    return fail("chat template '", std::string(name), "' is not one of chatml, gemma, llama3, llama2");
}

std::string_view chat_format_name(chat_format f) {
    switch (f) {
        case chat_format::chatml: return "chatml";
        case chat_format::gemma: return "gemma";
        case chat_format::llama3: return "llama3";
        case chat_format::llama2: return "llama2";
    }
    return "unknown";
}

result<chat_format> detect_chat_format(std::string_view t) {
    if (t.empty()) return fail("the model has no chat template (tokenizer.chat_template); choose one with --chat-template");
    auto has = [t](std::string_view s) { return t.find(s) != std::string_view::npos; };
    // Order matters: the markers are distinctive, but check the most specific first.
    if (has("<|start_header_id|>") && has("<|eot_id|>")) return chat_format::llama3;
    if (has("<start_of_turn>") && has("<end_of_turn>")) return chat_format::gemma;
    if (has("<|im_start|>") && has("<|im_end|>")) return chat_format::chatml;
    if (has("[INST]") && has("[/INST]")) return chat_format::llama2;
    return fail("the model's chat template is not one we recognise (chatml, gemma, llama3, llama2); "
                "choose one with --chat-template");
}

namespace {

status check_role(const chat_turn & turn) {
    if (turn.role == "system" || turn.role == "user" || turn.role == "assistant") return {};
    return fail("chat: role '", turn.role, "' is not one of system, user, assistant");
}

}  // namespace

result<std::string> render_chat(chat_format f, const std::vector<chat_turn> & turns) {
    if (turns.empty()) return fail("chat: the conversation has no messages");
    for (const auto & turn : turns)
        if (auto s = check_role(turn); !s) return s.error();
    std::string out;
    switch (f) {
        case chat_format::chatml:
            // Qwen2.5 templates add a default system message when none is given.
            if (turns.front().role != "system")
                out += "<|im_start|>system\nYou are a helpful coding assistant.<|im_end|>\n";
            for (const auto & turn : turns) out += "<|im_start|>" + turn.role + "\n" + turn.content + "<|im_end|>\n";
            out += "<|im_start|>assistant\n";
            break;
        case chat_format::gemma: {
            // Gemma has no system role: its template folds a system message into the first user turn.
            std::string pending_system;
            out += "<bos>";
            for (const auto & turn : turns) {
                if (turn.role == "system") { pending_system += turn.content + "\n\n"; continue; }
                const std::string role = turn.role == "assistant" ? "model" : "user";
                out += "<start_of_turn>" + role + "\n" + pending_system + turn.content + "<end_of_turn>\n";
                pending_system.clear();
            }
            out += "<start_of_turn>model\n";
            break;
        }
        case chat_format::llama3:
            out += "<|begin_of_text|>";
            for (const auto & turn : turns)
                out += "<|start_header_id|>" + turn.role + "<|end_header_id|>\n\n" + turn.content + "<|eot_id|>";
            out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
            break;
        case chat_format::llama2: {
            std::string system;
            bool first_user = true;
            out += "<s>";
            for (const auto & turn : turns) {
                if (turn.role == "system") { system = "<<SYS>>\n" + turn.content + "\n<</SYS>>\n\n"; continue; }
                if (turn.role == "user") {
                    out += "[INST] " + (first_user ? system : std::string()) + turn.content + " [/INST]";
                    first_user = false;
                } else {
                    out += " " + turn.content + " </s><s>";
                }
            }
            break;
        }
    }
    return out;
}

std::string_view chat_end_of_turn(chat_format f) {
    switch (f) {
        case chat_format::chatml: return "<|im_end|>";
        case chat_format::gemma: return "<end_of_turn>";
        case chat_format::llama3: return "<|eot_id|>";
        case chat_format::llama2: return "</s>";
    }
    return "";
}

}  // namespace hearth::inference
