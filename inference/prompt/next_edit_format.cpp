#include "inference/prompt/next_edit_format.h"

#include <algorithm>
#include <cctype>

namespace hearth::inference {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char & c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool names_next_edit_model(std::string_view name) {
    const std::string n = lower(name);
    for (std::string_view key : {"next-edit", "nextedit", "next_edit", "sweep"})
        if (n.find(key) != std::string::npos) return true;
    return false;
}

// The text without its one final newline: Sweep's sections are joined by "\n".
std::string_view without_final_newline(std::string_view s) {
    if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
    return s;
}

// Each line of `text` behind `mark` ("-", "+").
void append_marked(std::string & out, std::string_view mark, std::string_view text) {
    size_t at = 0;
    while (at < text.size()) {
        const size_t nl = text.find('\n', at);
        const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
        out += mark;
        out += text.substr(at, end - at);
        if (nl == std::string_view::npos) out += '\n';
        at = end;
    }
}

size_t count_lines(std::string_view s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')) + (!s.empty() && s.back() != '\n'); }

std::string sweep_prompt(const next_edit_input & in) {
    std::string p;
    if (!in.context.empty()) p += "<|file_sep|>" + in.path + "\n" + std::string(without_final_newline(in.context)) + "\n";
    for (const auto & e : in.edits) {
        p += "<|file_sep|>" + in.path + ".diff\noriginal:\n" + std::string(without_final_newline(e.original)) + "\nupdated:\n" +
             std::string(without_final_newline(e.updated)) + "\n";
    }
    p += "<|file_sep|>original/" + in.path + "\n" + std::string(without_final_newline(in.window_before)) + "\n";
    p += "<|file_sep|>current/" + in.path + "\n" + std::string(without_final_newline(in.window)) + "\n";
    p += "<|file_sep|>updated/" + in.path + "\n";
    return p;
}

std::string instruct_user_message(const next_edit_input & in) {
    std::string u;
    if (!in.edits.empty()) {
        u += "My recent edits to " + in.path + ", oldest first:\n```diff\n";
        for (const auto & e : in.edits) {
            u += "@@ -" + std::to_string(e.line + 1) + "," + std::to_string(count_lines(e.original)) + " +" +
                 std::to_string(e.line + 1) + "," + std::to_string(count_lines(e.updated)) + " @@\n";
            append_marked(u, "-", e.original);
            append_marked(u, "+", e.updated);
        }
        u += "```\n\n";
    }
    std::string marked = in.window;
    marked.insert(std::min(in.cursor, marked.size()), k_next_edit_cursor);
    u += "The code around my cursor (" + std::string(k_next_edit_cursor) + ") in " + in.path + ":\n```" + in.language_id + "\n" +
         marked + (marked.empty() || marked.back() == '\n' ? "" : "\n") + "```\n\n";
    u += "Rewrite this code as it will be after my next edit: continue what my recent edits started (the same rename, "
         "the same change at the other places it applies). Keep every other line exactly as it is, without the cursor mark. "
         "If no edit follows, write the code unchanged. Answer with the rewritten code only, in one fenced code block.";
    return u;
}

}  // namespace

std::string_view next_edit_family_name(next_edit_family f) {
    switch (f) {
        case next_edit_family::none: return "none";
        case next_edit_family::instruct: return "instruct";
        case next_edit_family::sweep: return "sweep";
    }
    return "none";
}

next_edit_format choose_next_edit_format(std::string_view name, std::string_view basename, bool has_file_sep, bool has_chat) {
    for (std::string_view n : {name, basename}) {
        if (names_next_edit_model(n) && has_file_sep)
            return {next_edit_family::sweep, "the model's name '" + std::string(n) + "' names a next-edit model"};
    }
    if (has_chat) return {next_edit_family::instruct, "an instruct model (it has a chat format)"};
    return {next_edit_family::none, "neither a next-edit model nor one with a chat format"};
}

result<std::string> build_next_edit_prompt(next_edit_family f, std::optional<chat_format> chat, const next_edit_input & in) {
    switch (f) {
        case next_edit_family::sweep: return sweep_prompt(in);
        case next_edit_family::instruct: {
            if (!chat) return fail("the instruct next-edit prompt needs a chat format, and the model has none");
            auto text = render_chat(*chat, {{"user", instruct_user_message(in)}});
            if (!text) return text.error();
            // The answer is opened with the fence: the model writes the window straight away.
            return *text + "```" + in.language_id + "\n";
        }
        case next_edit_family::none: break;
    }
    return fail("this model has no next-edit format (", next_edit_family_name(f), ")");
}

std::vector<std::string> next_edit_stop_strings(next_edit_family f) {
    if (f == next_edit_family::instruct) return {"```"};
    return {};
}

std::vector<std::string> next_edit_end_texts(next_edit_family f) {
    if (f == next_edit_family::sweep) return {"<|file_sep|>", "<|endoftext|>"};
    return {};
}

std::optional<std::string> parse_next_edit_output(next_edit_family f, std::string_view generated, bool complete,
                                                  std::string_view window) {
    if (f == next_edit_family::none || !complete) return std::nullopt;
    if (generated.find("```") != std::string_view::npos) return std::nullopt;
    std::string out(generated);
    // The cursor mark copied back from the prompt is not part of the code.
    for (size_t at; (at = out.find(k_next_edit_cursor)) != std::string::npos;) out.erase(at, k_next_edit_cursor.size());
    // The last line ends as the window's does (the fence or separator after it takes a newline).
    const bool window_ends_line = !window.empty() && window.back() == '\n';
    const bool out_ends_line = !out.empty() && out.back() == '\n';
    if (window_ends_line && !out_ends_line) out += '\n';
    if (!window_ends_line && out_ends_line) out.pop_back();
    return out;
}

}  // namespace hearth::inference
