// Vocabulary validation (untrusted metadata is refused at load with the field named) and
// the special-token API: FIM ids, end-of-generation set, special-token parsing, pieces.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "inference/gguf/gguf_file.h"
#include "inference/tokenizer/unicode.h"
#include "inference/tokenizer/vocab.h"

using namespace hearth::inference;
using namespace hearth::inference::tokenizer;

namespace {

const std::string k_fixtures = HEARTH_FIXTURES_DIR;

vocab open_fixture(const std::string & rel) {
    auto file = gguf::gguf_file::open(k_fixtures + "/" + rel);
    INFO(rel << ": " << (file ? "" : file.message()));
    REQUIRE(file);
    auto v = load_vocab(*file);
    INFO((v ? "" : v.message()));
    REQUIRE(v);
    return std::move(*v);
}

std::string hex2(unsigned b) {
    const char * digits = "0123456789ABCDEF";
    return {digits[b >> 4], digits[b & 15]};
}

// A small valid SentencePiece vocabulary: <unk> <s> </s>, 256 byte tokens, then words.
vocab_data tiny_spm() {
    vocab_data d;
    d.model = "llama";
    d.tokens = {"<unk>", "<s>", "</s>"};
    d.token_types = {2, 3, 3};
    for (unsigned b = 0; b < 256; ++b) {
        d.tokens.push_back("<0x" + hex2(b) + ">");
        d.token_types.push_back(6);
    }
    for (const char * w : {"\xE2\x96\x81", "\xE2\x96\x81h", "\xE2\x96\x81hi", "h", "i"}) {
        d.tokens.push_back(w);
        d.token_types.push_back(1);
    }
    d.scores.assign(d.tokens.size(), 0.0f);
    for (size_t i = 259; i < d.scores.size(); ++i) d.scores[i] = -float(i);
    return d;
}

// A small valid byte-level BPE vocabulary: the 256 byte symbols, "ab", "abc" and merges.
vocab_data tiny_bpe() {
    vocab_data d;
    d.model = "gpt2";
    d.pre = "gpt-2";
    for (unsigned b = 0; b < 256; ++b) d.tokens.emplace_back(byte_to_symbol(uint8_t(b)));
    d.tokens.push_back("ab");
    d.tokens.push_back("abc");
    d.tokens.push_back("<|endoftext|>");
    d.token_types.assign(d.tokens.size(), 1);
    d.token_types.back() = 3;
    d.merges = {"a b", "ab c"};
    d.special_ids = {{"tokenizer.ggml.eos_token_id", 258}, {"tokenizer.ggml.bos_token_id", 258}};
    return d;
}

void require_error(vocab_data d, const std::string & fragment) {
    auto v = vocab::create(std::move(d));
    REQUIRE(!v);
    INFO("error: " << v.message());
    CHECK(v.message().find(fragment) != std::string::npos);
}

}  // namespace

TEST_CASE("vocab: the tiny hand-made vocabularies are valid", "[inference][tokenizer]") {
    auto spm = vocab::create(tiny_spm());
    INFO((spm ? "" : spm.message()));
    REQUIRE(spm);
    CHECK(spm->tokenize("hi", false, false) == std::vector<token_id>{261});   // "▁hi"
    CHECK(spm->tokenize("hi", true, false) == std::vector<token_id>{1, 261});
    CHECK(spm->linefeed() == 3 + 0x0A);

    auto bpe = vocab::create(tiny_bpe());
    INFO((bpe ? "" : bpe.message()));
    REQUIRE(bpe);
    CHECK(bpe->tokenize("abc", false, false) == std::vector<token_id>{257});
    CHECK(bpe->tokenize("abab", false, false) == std::vector<token_id>{256, 256});
    CHECK(bpe->eos() == 258);
    CHECK(bpe->is_eog(258));
}

TEST_CASE("vocab: malformed metadata is refused at load, naming the field", "[inference][tokenizer]") {
    SECTION("unknown model") {
        auto d = tiny_spm();
        d.model = "wordpiece9";
        require_error(d, "tokenizer.ggml.model");
    }
    SECTION("no tokens") {
        auto d = tiny_spm();
        d.tokens.clear();
        d.scores.clear();
        d.token_types.clear();
        require_error(d, "tokenizer.ggml.tokens: missing or empty");
    }
    SECTION("scores sized unlike tokens") {
        auto d = tiny_spm();
        d.scores.pop_back();
        require_error(d, "tokenizer.ggml.scores: 263 entries for 264 tokens");
    }
    SECTION("token types sized unlike tokens") {
        auto d = tiny_spm();
        d.token_types.push_back(1);
        require_error(d, "tokenizer.ggml.token_type: 265 entries for 264 tokens");
    }
    SECTION("token type out of range") {
        auto d = tiny_spm();
        d.token_types[261] = 9;
        require_error(d, "tokenizer.ggml.token_type[261] = 9 (expected 0..6)");
    }
    SECTION("byte token not of the form <0xHH>") {
        auto d = tiny_spm();
        d.token_types[262] = 6;   // "h" marked as a byte token
        require_error(d, "tokenizer.ggml.token_type[262]: byte token 'h' is not of the form <0xHH>");
    }
    SECTION("SPM without a byte-fallback token") {
        auto d = tiny_spm();
        d.tokens[3 + 0x41] = "<0x41x>";
        d.token_types[3 + 0x41] = 1;
        require_error(d, "no byte-fallback token <0x41>");
    }
    SECTION("SPM byte-fallback token that is not of byte type") {
        auto d = tiny_spm();
        d.token_types[3 + 0x0A] = 1;
        require_error(d, "must have type byte");
    }
    SECTION("SPM without the space mark") {
        auto d = tiny_spm();
        d.tokens[259] = "_";
        require_error(d, "no normal token");
    }
    SECTION("duplicate token text") {
        auto d = tiny_spm();
        d.tokens[263] = "h";
        d.tokens[262] = "h";
        require_error(d, "tokenizer.ggml.tokens[263]: 'h' repeats token 262");
    }
    SECTION("token longer than the bound") {
        auto d = tiny_spm();
        d.tokens[263] = std::string(k_max_token_bytes + 1, 'x');
        require_error(d, "tokenizer.ggml.tokens[263]: 4097 bytes");
    }
    SECTION("special id outside the vocabulary") {
        auto d = tiny_spm();
        d.special_ids.push_back({"tokenizer.ggml.eos_token_id", 999});
        require_error(d, "tokenizer.ggml.eos_token_id = 999 is outside the vocabulary (264 tokens)");
    }
    SECTION("negative special id") {
        auto d = tiny_spm();
        d.special_ids.push_back({"tokenizer.ggml.fim_pre_token_id", -5});
        require_error(d, "tokenizer.ggml.fim_pre_token_id = -5");
    }
    SECTION("BPE missing a byte symbol") {
        auto d = tiny_bpe();
        d.tokens[0x0A] = "newline?";
        require_error(d, "no token spells byte 0x0A");
    }
    SECTION("BPE without merges") {
        auto d = tiny_bpe();
        d.merges.clear();
        require_error(d, "tokenizer.ggml.merges: missing or empty");
    }
    SECTION("merge naming a token that does not exist") {
        auto d = tiny_bpe();
        d.merges.push_back("abc zz");
        require_error(d, "tokenizer.ggml.merges[2]: 'abc zz': 'zz' is not a token");
    }
    SECTION("merge that is not two texts") {
        auto d = tiny_bpe();
        d.merges.insert(d.merges.begin(), "abc");
        require_error(d, "tokenizer.ggml.merges[0]: 'abc' is not two token texts");
    }
    SECTION("unknown pre-tokenizer") {
        auto d = tiny_bpe();
        d.pre = "made-up-pre";
        require_error(d, "tokenizer.ggml.pre: unknown pre-tokenizer 'made-up-pre'");
    }
    SECTION("add_bos without a BOS token") {
        auto d = tiny_bpe();
        d.pre = "glm4";   // llama.cpp gives this pre-tokenizer no default BOS
        d.special_ids = {};
        d.add_bos = true;
        require_error(d, "tokenizer.ggml.add_bos_token");
    }
}

TEST_CASE("vocab: ids written as 0xFFFFFFFF mean none and keep the default", "[inference][tokenizer]") {
    auto d = tiny_spm();
    d.special_ids = {{"tokenizer.ggml.padding_token_id", 0xFFFFFFFFll}, {"tokenizer.ggml.bos_token_id", 0xFFFFFFFFll}};
    auto v = vocab::create(std::move(d));
    REQUIRE(v);
    CHECK(v->pad() == k_no_token);
    CHECK(v->bos() == 1);
}

TEST_CASE("vocab: a merge whose result is not a token still encodes every byte", "[inference][tokenizer]") {
    auto d = tiny_bpe();
    d.merges.push_back("c d");   // "cd" is not in the vocabulary
    auto v = vocab::create(std::move(d));
    REQUIRE(v);
    const auto ids = v->tokenize("cd", false, false);
    CHECK(ids == std::vector<token_id>{token_id('c'), token_id('d')});
    CHECK(v->detokenize(ids) == "cd");
}

TEST_CASE("vocab: starcoder's FIM, EOG and special-token parsing", "[inference][tokenizer]") {
    const vocab v = open_fixture("tokenizer/ggml-vocab-starcoder.gguf");
    CHECK(v.kind() == vocab_kind::bpe);
    CHECK(v.pre() == "starcoder");
    CHECK(v.fim_pre() == 1);   // "<fim_prefix>", found by its text
    CHECK(v.fim_mid() == 2);
    CHECK(v.fim_suf() == 3);
    CHECK(v.fim_pad() == 4);
    CHECK(v.eos() == 0);
    CHECK(v.is_eog(0));
    CHECK(v.is_eog(4));        // fim_pad ends generation, as in llama.cpp
    CHECK(!v.is_eog(1));
    CHECK(!v.add_bos());

    const std::string prompt = "<fim_prefix>def f(x):\n    return <fim_suffix>\n<fim_middle>";
    const auto parsed = v.tokenize(prompt, false, true);
    REQUIRE(parsed.size() > 4);
    CHECK(parsed.front() == 1);
    CHECK(parsed.back() == 2);
    CHECK(std::count(parsed.begin(), parsed.end(), 3) == 1);
    const auto plain = v.tokenize(prompt, false, false);
    CHECK(std::count(plain.begin(), plain.end(), 1) == 0);   // control text stays text
    CHECK(v.detokenize(plain) == prompt);
    CHECK(v.detokenize(parsed) == "def f(x):\n    return \n");
    CHECK(v.detokenize(parsed, false, true) == prompt);
    CHECK(v.piece(1).empty());
    CHECK(v.piece(1, true) == "<fim_prefix>");
    CHECK(v.is_control(1));
}

TEST_CASE("vocab: deepseek-coder FIM tokens and user-defined tokens", "[inference][tokenizer]") {
    const vocab v = open_fixture("tokenizer/ggml-vocab-deepseek-coder.gguf");
    CHECK(v.fim_pre() == v.find_token("<｜fim▁begin｜>"));
    CHECK(v.fim_suf() == v.find_token("<｜fim▁hole｜>"));
    CHECK(v.fim_mid() == v.find_token("<｜fim▁end｜>"));
    CHECK(v.fim_pre() == 32016);
    CHECK(v.bos() == 32013);
    CHECK(v.eos() == 32014);
    CHECK(v.add_bos());
    CHECK(v.is_eog(32014));
    // User-defined tokens are split out even without parse_special, as llama.cpp does...
    const auto ids = v.tokenize("a<|User|>b", false, false);
    CHECK(std::count(ids.begin(), ids.end(), 32019) == 1);
    // ...but FIM tokens found by their text become control tokens, parsed only on request.
    const auto plain = v.tokenize("a<｜fim▁hole｜>b", false, false);
    CHECK(std::count(plain.begin(), plain.end(), 32015) == 0);
    const auto parsed = v.tokenize("a<｜fim▁hole｜>b", false, true);
    CHECK(std::count(parsed.begin(), parsed.end(), 32015) == 1);
    CHECK(v.tokenize("x", true, false).front() == 32013);
}

TEST_CASE("vocab: gpt-2 and SPM pieces", "[inference][tokenizer]") {
    const vocab gpt2 = open_fixture("tokenizer/ggml-vocab-gpt-2.gguf");
    const token_id world = gpt2.find_token("\xC4\xA0world");   // "Ġworld"
    REQUIRE(world != k_no_token);
    CHECK(gpt2.piece(world) == " world");
    CHECK(gpt2.eos() == 50256);
    CHECK(gpt2.is_eog(50256));
    CHECK(gpt2.linefeed() == gpt2.find_token("\xC4\x8A"));   // "Ċ"
    CHECK(gpt2.piece(-1).empty());
    CHECK(gpt2.piece(gpt2.n_tokens()).empty());
    CHECK(gpt2.token_text(gpt2.n_tokens()).empty());

    const vocab spm = open_fixture("tokenizer/ggml-vocab-llama-spm.gguf");
    CHECK(spm.piece(29871) == " ");
    CHECK(spm.piece(spm.find_token("<0x0A>")) == "\n");
    CHECK(spm.linefeed() == spm.find_token("<0x0A>"));
    CHECK(spm.type(spm.find_token("<0x0A>")) == token_type::byte);
    CHECK(spm.detokenize(spm.tokenize("Hello world", false, false)) == "Hello world");
    // With BOS in front, llama.cpp keeps the space SPM added.
    CHECK(spm.detokenize(spm.tokenize("Hello", true, false)) == " Hello");
    CHECK(spm.detokenize(spm.tokenize("Hello", true, false), true) == " Hello");
}

TEST_CASE("vocab: phi-3's special tokens swallow the whitespace after them", "[inference][tokenizer]") {
    const vocab v = open_fixture("tokenizer/ggml-vocab-phi-3.gguf");
    const token_id user = v.find_token("<|user|>");
    REQUIRE(user != k_no_token);
    const auto ids = v.tokenize("<|user|>\n  Hi", false, true);
    REQUIRE(ids.size() >= 2);
    CHECK(ids[0] == user);
    CHECK(v.token_text(ids[1]) == "\xE2\x96\x81Hi");   // the newline and spaces are gone
    CHECK(v.is_eog(v.find_token("<|end|>")));
    CHECK(v.is_eog(32000));
}

TEST_CASE("vocab: stories260K special tokens with parse_special", "[inference][tokenizer]") {
    const vocab v = open_fixture("models/stories260K-F32.gguf");
    const auto parsed = v.tokenize("<s>Hi</s>", false, true);
    REQUIRE(parsed.size() >= 3);
    CHECK(parsed.front() == 1);
    CHECK(parsed.back() == 2);
    const auto plain = v.tokenize("<s>Hi</s>", false, false);
    CHECK(std::count(plain.begin(), plain.end(), 1) == 0);
    CHECK(v.detokenize(plain) == "<s>Hi</s>");
}
