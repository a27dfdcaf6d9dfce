// Special tokens llama.cpp finds by their text when the file does not name them (EOT, EOM,
// FIM), its end-of-generation set, per-model strip attributes, the special-token split
// lists and the piece cache. Texts and rules follow llama-vocab.cpp so that the same model
// file stops on the same tokens here as there.
#include <algorithm>
#include <initializer_list>

#include "inference/tokenizer/unicode.h"
#include "inference/tokenizer/vocab_impl.h"

namespace hearth::inference::tokenizer {

namespace {

using names = std::initializer_list<std::string_view>;

bool one_of(std::string_view s, names list) {
    return std::find(list.begin(), list.end(), s) != list.end();
}

// First token (lowest id) whose text is in `list`; control-looking tokens become control.
void detect(vocab::impl & v, token_id & slot, names list) {
    if (slot != k_no_token) return;
    for (token_id id = 0; id < v.n_tokens(); ++id) {
        if (one_of(v.tokens[id].text, list)) {
            slot = id;
            v.tokens[id].attr |= attr_control;
            return;
        }
    }
}

void build_eog(vocab::impl & v) {
    std::vector<token_id> eog;
    for (const token_id id : {v.fim_pad, v.fim_rep, v.fim_sep, v.eos, v.eot, v.eom}) {
        if (id != k_no_token) eog.push_back(id);
    }
    static const names k_eog_texts = {
        "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
        "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
        "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
        "<｜end▁of▁sentence｜>", "[e~[",
    };
    for (token_id id = 0; id < v.n_tokens(); ++id) {
        if (one_of(v.tokens[id].text, k_eog_texts)) {
            eog.push_back(id);
            v.tokens[id].attr |= attr_control;
        }
    }
    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());

    auto has = [&](std::string_view text) {
        return std::any_of(eog.begin(), eog.end(), [&](token_id id) { return v.tokens[id].text == text; });
    };
    auto drop = [&](std::string_view text, uint16_t attr) {
        for (auto it = eog.begin(); it != eog.end(); ++it) {
            if (v.tokens[*it].text == text) {
                v.tokens[*it].attr = attr;
                eog.erase(it);
                return;
            }
        }
    };
    // Chat formats where "<|end|>" ends a message but not the answer (gpt-oss, solar-open),
    // and gemma4 / paddleocr, where "</s>" is ordinary text.
    const bool has_call = has("<|call|>") || has("<|calls|>");
    if (has("<|end|>") && ((has("<|return|>") && has_call) || (has_call && has("<|flush|>")))) {
        drop("<|end|>", attr_user_defined);
    }
    if (has("<|tool_response>") && has("</s>")) drop("</s>", attr_normal);
    v.eog = std::move(eog);
}

void build_special_lists(vocab::impl & v) {
    std::vector<token_id> all;
    for (token_id id = 0; id < v.n_tokens(); ++id) {
        if (v.tokens[id].attr & (attr_control | attr_user_defined | attr_unknown)) all.push_back(id);
    }
    // Longest first, so "<|fim_prefix|>" is not cut by a shorter token inside it; equal
    // lengths keep id order so the result does not depend on the sort.
    std::stable_sort(all.begin(), all.end(), [&](token_id a, token_id b) {
        return v.tokens[a].text.size() > v.tokens[b].text.size();
    });
    v.special_parsed = all;
    for (const token_id id : all) {
        if (!(v.tokens[id].attr & (attr_control | attr_unknown))) v.special_always.push_back(id);
    }
}

// Phi-3's added tokens swallow the whitespace after them (its tokenizer.json says rstrip).
void apply_model_attrs(vocab::impl & v) {
    std::string lower = v.name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (lower.find("phi-3") == std::string::npos && lower.find("phi3") == std::string::npos) return;
    for (const token_id id : v.special_parsed) v.tokens[id].attr |= attr_rstrip;
    if (const token_id id = v.find("</s>"); id != k_no_token) v.tokens[id].attr |= attr_rstrip;
    for (const auto text : {"<unk>", "<s>", "<|endoftext|>"}) {
        if (const token_id id = v.find(text); id != k_no_token) v.tokens[id].attr &= uint16_t(~attr_rstrip);
    }
}

std::string render(const vocab::impl & v, token_id id) {
    const token_entry & e = v.tokens[id];
    if (e.attr & (attr_control | attr_unknown | attr_user_defined)) return e.text;
    if (e.attr & attr_byte) {
        // Validated at load: "<0xHH>".
        return std::string(1, char(std::stoi(e.text.substr(3, 2), nullptr, 16)));
    }
    if (!(e.attr & attr_normal)) return {};   // unused / undefined tokens render as nothing
    if (v.kind == vocab_kind::spm) {
        std::string out;
        for (size_t i = 0; i < e.text.size(); ++i) {
            if (e.text.compare(i, 3, "\xE2\x96\x81") == 0) {
                out += ' ';
                i += 2;
            } else {
                out += e.text[i];
            }
        }
        return out;
    }
    // Byte-level BPE; a normal token outside the alphabet is shown as written.
    auto raw = symbols_to_bytes(e.text);
    return raw ? std::move(*raw) : e.text;
}

}  // namespace

void detect_special_tokens(vocab::impl & v) {
    detect(v, v.eot, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
                      "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"});
    detect(v, v.eom, {"<|eom_id|>"});
    detect(v, v.fim_pre, {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                          "<|code_prefix|>", "<|prefix|>"});
    detect(v, v.fim_suf, {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                          "<|code_suffix|>", "<|suffix|>"});
    detect(v, v.fim_mid, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                          "<|code_middle|>", "<|middle|>"});
    detect(v, v.fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"});
    detect(v, v.fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"});
    detect(v, v.fim_sep, {"<|file_sep|>"});

    // Control tokens named like "<unused12>" are unused.
    for (auto & e : v.tokens) {
        if ((e.attr & attr_control) && e.text.find("unused") != std::string::npos) e.attr |= attr_unused;
    }
    build_eog(v);
    build_special_lists(v);
    apply_model_attrs(v);
}

void finish_vocab(vocab::impl & v) {
    v.pieces.resize(v.tokens.size());
    for (token_id id = 0; id < v.n_tokens(); ++id) v.pieces[id] = render(v, id);

    if (v.kind == vocab_kind::spm) {
        v.linefeed = v.byte_token['\n'];
    } else {
        std::vector<token_id> ids;
        bpe_encode(v, "\n", ids);
        v.linefeed = ids.empty() ? k_no_token : ids[0];
    }
}

}  // namespace hearth::inference::tokenizer
