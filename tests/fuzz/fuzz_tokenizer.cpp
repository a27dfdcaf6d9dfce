// fuzz-links: hearth_inference
// Tokenizes and detokenizes arbitrary bytes, and builds vocabularies from arbitrary token and
// merge lists. Nothing may crash, hang or trip a sanitizer, and every encoding must decode to
// its input (byte-level BPE: exactly; SPM: with U+2581 read as a space).
//
// Input: byte 0 chooses the mode, the rest is the payload.
//   bit 7 clear: tokenize the payload with a fixture vocabulary (bits 2-3 pick it; bit 0 =
//                add_special, bit 1 = parse_special).
//   bit 7 set:   build a vocabulary: the 256 byte tokens plus the payload's lines before the
//                first NUL as tokens, the lines after it as merges (BPE, bit 0 clear) or as
//                nothing (SPM, bit 0 set); then tokenize the payload with it.
// Vocabularies: HEARTH_FUZZ_VOCAB (GGUF paths separated by ':'), else the gpt-2 and llama-spm
// fixtures in the source tree (tests/fixtures/tokenizer/).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "inference/gguf/gguf_file.h"
#include "inference/tokenizer/detokenizer.h"
#include "inference/tokenizer/unicode.h"
#include "inference/tokenizer/vocab.h"

namespace {

using namespace hearth::inference;
using namespace hearth::inference::tokenizer;

void check(bool ok, const char * what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz_tokenizer: %s\n", what);
        std::abort();
    }
}

std::vector<std::string> vocab_paths() {
    std::vector<std::string> paths;
    if (const char * env = std::getenv("HEARTH_FUZZ_VOCAB"); env && *env) {
        std::string_view rest = env;
        while (!rest.empty()) {
            const size_t colon = rest.find(':');
            paths.emplace_back(rest.substr(0, colon));
            rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        }
        return paths;
    }
    const auto dir = std::filesystem::path(HEARTH_SOURCE_DIR) / "tests" / "fixtures" / "tokenizer";
    for (const char * name : {"ggml-vocab-gpt-2.gguf", "ggml-vocab-llama-spm.gguf"}) paths.push_back((dir / name).string());
    return paths;
}

struct loaded {
    std::vector<gguf::gguf_file> files;
    std::vector<vocab> vocabs;
};

const loaded & fixtures() {
    static const loaded l = [] {
        loaded r;
        for (const auto & p : vocab_paths()) {
            auto f = gguf::gguf_file::open(p);
            if (!f) {
                std::fprintf(stderr, "fuzz_tokenizer: %s: %s\n", p.c_str(), f.message().c_str());
                std::abort();
            }
            auto v = load_vocab(*f);
            if (!v) {
                std::fprintf(stderr, "fuzz_tokenizer: %s: %s\n", p.c_str(), v.message().c_str());
                std::abort();
            }
            r.vocabs.push_back(std::move(*v));
            r.files.push_back(std::move(*f));
        }
        return r;
    }();
    return l;
}

std::string expected_text(const vocab & v, std::string_view text) {
    std::string out;
    if (v.kind() == vocab_kind::spm) {
        for (size_t i = 0; i < text.size(); ++i) {
            if (text.compare(i, 3, "\xE2\x96\x81") == 0) {
                out += ' ';
                i += 2;
            } else {
                out += text[i];
            }
        }
        return out;
    }
    for (const char c : text) {
        if (v.find_token(byte_to_symbol(static_cast<unsigned char>(c))) == k_no_token) out += "\xEF\xBF\xBD";
        else out += c;
    }
    return out;
}

void exercise(const vocab & v, std::string_view text, bool add_special, bool parse_special) {
    const auto ids = v.tokenize(text, add_special, parse_special);
    for (const auto id : ids) check(id >= 0 && id < v.n_tokens(), "token id out of range");

    stream_detokenizer stream(v);
    std::string streamed, pieces;
    for (const auto id : ids) {
        streamed += stream.push(id);
        pieces += v.piece(id);
        check(stream.held_bytes() <= 3, "detokenizer holds more than a partial character");
    }
    streamed += stream.flush();
    check(streamed == pieces, "streamed text differs from the pieces");

    if (!add_special && !parse_special) {
        // User-defined tokens are matched even without parse_special; their piece is their
        // text, so the round trip holds for them too.
        check(v.detokenize(ids) == expected_text(v, text), "detokenize(tokenize(x)) != x");
    }
    if (parse_special && !add_special && v.kind() == vocab_kind::bpe) {
        check(v.detokenize(ids, false, true) == expected_text(v, text), "special tokens do not render back");
    }
}

std::vector<std::string> lines(std::string_view s) {
    std::vector<std::string> out;
    while (!s.empty()) {
        const size_t nl = s.find('\n');
        out.emplace_back(s.substr(0, nl));
        s = nl == std::string_view::npos ? std::string_view{} : s.substr(nl + 1);
    }
    return out;
}

void build_and_exercise(std::string_view payload, bool spm) {
    vocab_data d;
    d.model = spm ? "llama" : "gpt2";
    d.pre = spm ? "" : "qwen2";
    for (unsigned b = 0; b < 256; ++b) {
        if (spm) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "<0x%02X>", b);
            d.tokens.emplace_back(buf);
            d.token_types.push_back(6);
        } else {
            d.tokens.emplace_back(byte_to_symbol(uint8_t(b)));
            d.token_types.push_back(1);
        }
    }
    const size_t nul = payload.find('\0');
    for (auto & t : lines(payload.substr(0, nul))) {
        const bool control = t.rfind("<|", 0) == 0;
        d.tokens.push_back(std::move(t));
        d.token_types.push_back(control ? 3 : 1);
    }
    if (nul != std::string_view::npos && !spm) d.merges = lines(payload.substr(nul + 1));
    if (spm) {
        for (size_t i = 0; i < d.tokens.size(); ++i) d.scores.push_back(-float(i));
        d.special_ids = {{"tokenizer.ggml.bos_token_id", 0}, {"tokenizer.ggml.eos_token_id", 0}};
    } else {
        d.special_ids = {{"tokenizer.ggml.eos_token_id", 0}};
    }
    auto v = vocab::create(std::move(d));
    if (!v) {
        check(!v.message().empty(), "an error without a message");
        return;
    }
    exercise(*v, payload, false, false);
    exercise(*v, payload, true, true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size == 0) return 0;
    const uint8_t mode = data[0];
    const std::string_view payload(reinterpret_cast<const char *>(data + 1), size - 1);
    if (mode & 0x80) {
        build_and_exercise(payload, mode & 1);
        return 0;
    }
    const auto & f = fixtures();
    const vocab & v = f.vocabs[((mode >> 2) & 3) % f.vocabs.size()];
    exercise(v, payload, mode & 1, mode & 2);
    return 0;
}
