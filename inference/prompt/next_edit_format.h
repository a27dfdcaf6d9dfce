// next_edit_format: the prompt that asks a model for the next edit, by model family, chosen at
// load as the chat format is (inference/load/loaded_model.h). The model is shown the recent
// edits and a window of the file around the cursor, and writes the window again as it will be
// after the next edit; the caller diffs that against the window (daemon/pipeline/window_diff.h).
//  - sweep: Sweep's open next-edit models (Qwen2.5-Coder based), told by their GGUF name. Raw
//    text in Qwen2.5-Coder's repository form: the file's context, each recent edit as an
//    "original:/updated:" pair under <|file_sep|>{path}.diff, then the window before the latest
//    edit (original/{path}), now (current/{path}), and updated/{path} for the model to write;
//    it ends at <|file_sep|> or <|endoftext|>.
//  - instruct: any model with a chat format (the pinned Qwen2.5-Coder instruct models): the
//    edits as unified-diff hunks, the window in a fenced block with the cursor marked, and the
//    answer opened with the fence, so the model writes the window and closes the fence.
//  - none: no chat format and not a next-edit model: no prediction.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "inference/prompt/chat_template.h"

namespace hearth::inference {

enum class next_edit_family { none, instruct, sweep };
std::string_view next_edit_family_name(next_edit_family f);   // "none", "instruct", "sweep"

struct next_edit_format {
    next_edit_family family = next_edit_family::none;
    std::string reason;   // why: the name that matched, or the chat format
};

// sweep when general.name or general.basename names a next-edit model ("next-edit", "nextedit",
// "next_edit" or "sweep", any case) and the vocabulary has <|file_sep|>; else instruct when the
// model has a chat format; else none.
next_edit_format choose_next_edit_format(std::string_view name, std::string_view basename, bool has_file_sep,
                                         bool has_chat);

// One recent edit as whole lines: `original` became `updated` at 0-based line `line` of the
// file then (each line ending in its newline; either may be empty).
struct next_edit_hunk {
    uint32_t line = 0;
    std::string original;
    std::string updated;
};

struct next_edit_input {
    std::string path;                    // the file's path as shown to the model
    std::string language_id;             // LSP languageId, names the instruct format's fence
    std::string context;                 // sweep: the file around the window ("": none)
    std::vector<next_edit_hunk> edits;   // oldest first
    std::string window_before;           // sweep: the window before the latest edit
    std::string window;                  // the window now, whole lines
    size_t cursor = 0;                   // byte offset of the cursor in `window`
};

// What the instruct format writes where the cursor is.
inline constexpr std::string_view k_next_edit_cursor = "<|cursor|>";

// The prompt text, special tokens written out (tokenize it with special parsing on). instruct
// needs the model's chat format.
result<std::string> build_next_edit_prompt(next_edit_family f, std::optional<chat_format> chat, const next_edit_input & in);

// Texts that end the generation (cut before them): the closing fence for instruct; sweep ends
// at its tokens (next_edit_end_texts).
std::vector<std::string> next_edit_stop_strings(next_edit_family f);
// Token texts that end the generation besides the vocabulary's end-of-generation set.
std::vector<std::string> next_edit_end_texts(next_edit_family f);

// The rewritten window from what the model wrote, given how it ended (`complete`: at its stop
// string or end token, not cut by a budget) and the window it was shown; nullopt when it cannot
// be read as one (cut short, a fence left in it). Its last line ends as the window's does.
std::optional<std::string> parse_next_edit_output(next_edit_family f, std::string_view generated, bool complete,
                                                  std::string_view window);

}  // namespace hearth::inference
