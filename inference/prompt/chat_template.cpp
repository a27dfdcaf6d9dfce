#include "inference/prompt/chat_template.h"

namespace hearth::inference {

namespace {

// DeepSeek's sentence markers. U+2581 (the SentencePiece space) is written as its bytes: an
// SPM vocabulary reads it as a space, so source that spells it out does not survive a
// tokenizer round trip (test_tokenizer_roundtrip tokenizes these files).
constexpr const char * k_deepseek_bos = "<｜begin" "\xe2\x96\x81" "of" "\xe2\x96\x81" "sentence｜>";
constexpr const char * k_deepseek_eos = "<｜end" "\xe2\x96\x81" "of" "\xe2\x96\x81" "sentence｜>";

struct format_info {
    chat_format format;
    std::string_view name;
    std::vector<std::string_view> tokens;   // the special tokens render_chat writes
};

// Also the order in which a vocabulary's tokens are tried when the template says nothing.
const std::vector<format_info> & formats() {
    static const std::vector<format_info> all{
        {chat_format::llama3, "llama3", {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"}},
        {chat_format::gemma, "gemma", {"<bos>", "<start_of_turn>", "<end_of_turn>"}},
        {chat_format::chatml, "chatml", {"<|im_start|>", "<|im_end|>"}},
        {chat_format::deepseek_r1, "deepseek-r1",
         {k_deepseek_bos, "<｜User｜>", "<｜Assistant｜>", k_deepseek_eos, "<think>", "</think>"}},
        {chat_format::deepseek, "deepseek", {k_deepseek_bos, "<｜User｜>", "<｜Assistant｜>", k_deepseek_eos}},
        {chat_format::phi3, "phi3", {"<|system|>", "<|user|>", "<|assistant|>", "<|end|>"}},
        {chat_format::granite, "granite", {"<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>"}},
        {chat_format::llama2, "llama2", {"<s>", "</s>"}},
        {chat_format::mistral, "mistral", {"<s>", "</s>"}},
    };
    return all;
}

const format_info & info(chat_format f) {
    for (const auto & i : formats())
        if (i.format == f) return i;
    return formats().front();   // unreachable: every enumerator is listed
}

std::string names() {
    std::string out;
    for (const auto & i : formats()) out += (out.empty() ? "" : ", ") + std::string(i.name);
    return out;
}

std::string join(const std::vector<std::string_view> & xs) {
    std::string out;
    for (auto x : xs) out += (out.empty() ? "" : ", ") + std::string(x);
    return out;
}

}  // namespace

result<chat_format> parse_chat_format(std::string_view name) {
    for (const auto & i : formats())
        if (i.name == name) return i.format;
    return fail("chat template '", std::string(name), "' is not one of ", names());
}

std::string_view chat_format_name(chat_format f) { return info(f).name; }

std::vector<std::string_view> chat_format_tokens(chat_format f) { return info(f).tokens; }

result<chat_format> detect_chat_format(std::string_view t) {
    if (t.empty()) return fail("the model has no chat template (tokenizer.chat_template); choose one with --chat-template");
    auto has = [t](std::string_view s) { return t.find(s) != std::string_view::npos; };
    // Order matters: the markers are distinctive, but check the most specific first.
    if (has("<|start_header_id|>") && has("<|eot_id|>")) return chat_format::llama3;
    if (has("<start_of_turn>") && has("<end_of_turn>")) return chat_format::gemma;
    if (has("<｜User｜>") && has("<｜Assistant｜>"))
        return has("</think>") ? chat_format::deepseek_r1 : chat_format::deepseek;
    if (has("<|im_start|>") && has("<|im_end|>")) return chat_format::chatml;
    if (has("<|start_of_role|>") && has("<|end_of_role|>")) return chat_format::granite;
    if (has("<|user|>") && has("<|assistant|>") && has("<|end|>")) return chat_format::phi3;
    if (has("[INST]") && has("[/INST]")) return has("<<SYS>>") ? chat_format::llama2 : chat_format::mistral;
    return fail("the model's chat template is not one we recognise (", names(), "); choose one with --chat-template");
}

status check_chat_format(chat_format f, const tokenizer::vocab & v) {
    std::vector<std::string_view> missing;
    for (auto tok : info(f).tokens)
        if (v.find_token(tok) == k_no_token) missing.push_back(tok);
    if (missing.empty()) return {};
    return fail("chat format ", info(f).name, " needs the tokens ", join(info(f).tokens), " but the vocabulary lacks ",
                join(missing));
}

result<chat_choice> choose_chat_format(std::string_view requested, std::string_view template_text,
                                       const tokenizer::vocab & v) {
    if (!requested.empty()) {
        auto f = parse_chat_format(requested);
        if (!f) return f.error();
        if (auto s = check_chat_format(*f, v); !s) return fail("--chat-template ", std::string(requested), ": ", s.message());
        return chat_choice{*f, "--chat-template " + std::string(requested)};
    }
    std::string why;
    if (template_text.empty()) {
        why = "no tokenizer.chat_template";
    } else if (auto f = detect_chat_format(template_text); !f) {
        why = "tokenizer.chat_template is not a format we recognise";
    } else if (auto s = check_chat_format(*f, v); !s) {
        why = "tokenizer.chat_template looks like " + std::string(info(*f).name) + " but the vocabulary lacks its tokens";
    } else {
        return chat_choice{*f, "tokenizer.chat_template matches " + std::string(info(*f).name) + " (" +
                                   join(info(*f).tokens) + ")"};
    }
    for (const auto & i : formats()) {
        if (i.format == chat_format::llama2 || i.format == chat_format::mistral) continue;
        if (check_chat_format(i.format, v))
            return chat_choice{i.format, why + "; the vocabulary has " + std::string(i.name) + "'s tokens (" + join(i.tokens) + ")"};
    }
    return fail(why, ", and the vocabulary has the turn tokens of none of ", names(), "; choose one with --chat-template");
}

namespace {

// Jinja's trim: leading and trailing whitespace.
std::string trimmed(std::string_view s) {
    const size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return {};
    return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

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
            // No system turn, no system block: the caller chooses the system message (the
            // daemon's [chat] system-prompt, "" for none; an HTTP client's messages as sent).
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
            // Llama 2 chat and CodeLlama-Instruct: the system message opens the first [INST], and
            // each turn's text is trimmed (the templates' `content | trim`, applied to the system
            // block and the user text together).
            std::string system;
            bool first_user = true;
            out += "<s>";
            for (const auto & turn : turns) {
                if (turn.role == "system") { system = "<<SYS>>\n" + turn.content + "\n<</SYS>>\n\n"; continue; }
                if (turn.role == "user") {
                    out += "[INST] " + trimmed((first_user ? system : std::string()) + turn.content) + " [/INST]";
                    first_user = false;
                } else {
                    out += " " + trimmed(turn.content) + " </s><s>";
                }
            }
            break;
        }
        case chat_format::mistral: {
            // Mistral's template has no system role: a system message goes before the first user turn.
            std::string system;
            out += "<s>";
            for (const auto & turn : turns) {
                if (turn.role == "system") { system += turn.content + "\n\n"; continue; }
                if (turn.role == "user") {
                    out += "[INST] " + system + turn.content + " [/INST]";
                    system.clear();
                } else {
                    out += turn.content + "</s>";
                }
            }
            break;
        }
        case chat_format::phi3:
            for (const auto & turn : turns) out += "<|" + turn.role + "|>\n" + turn.content + "<|end|>\n";
            out += "<|assistant|>\n";
            break;
        case chat_format::deepseek:
        case chat_format::deepseek_r1: {
            // The system prompt follows BOS bare; an earlier answer keeps only what follows its
            // reasoning (the R1 template drops everything up to </think>).
            const bool r1 = f == chat_format::deepseek_r1;
            out += k_deepseek_bos;
            for (const auto & turn : turns)
                if (turn.role == "system") out += turn.content;
            for (const auto & turn : turns) {
                if (turn.role == "user") {
                    out += "<｜User｜>" + turn.content;
                } else if (turn.role == "assistant") {
                    std::string_view answer = turn.content;
                    if (const auto end = answer.rfind("</think>"); r1 && end != std::string_view::npos)
                        answer.remove_prefix(end + 8);
                    out += "<｜Assistant｜>" + std::string(answer) + k_deepseek_eos;
                }
            }
            out += r1 ? "<｜Assistant｜><think>\n" : "<｜Assistant｜>";
            break;
        }
        case chat_format::granite:
            for (const auto & turn : turns)
                out += "<|start_of_role|>" + turn.role + "<|end_of_role|>" + turn.content + "<|end_of_text|>\n";
            out += "<|start_of_role|>assistant<|end_of_role|>";
            break;
    }
    return out;
}

std::string_view chat_end_of_turn(chat_format f) {
    switch (f) {
        case chat_format::chatml: return "<|im_end|>";
        case chat_format::gemma: return "<end_of_turn>";
        case chat_format::llama3: return "<|eot_id|>";
        case chat_format::llama2:
        case chat_format::mistral: return "</s>";
        case chat_format::phi3: return "<|end|>";
        case chat_format::deepseek:
        case chat_format::deepseek_r1: return k_deepseek_eos;
        case chat_format::granite: return "<|end_of_text|>";
    }
    return "";
}

}  // namespace hearth::inference
