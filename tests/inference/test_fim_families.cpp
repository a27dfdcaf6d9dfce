// FIM prompts by model family against llama.cpp's (tests/golden/fim/, made by
// tests/golden/gen_fim_golden.py with llama-cpp-python): the StarCoder2 and DeepSeek-Coder
// tokenizer fixtures, CodeLlama-style and CodeGemma-style vocabularies derived from the
// llama-spm fixture by the same recipe as the generator, and the default model (Qwen2.5-Coder)
// when present. Then each family's repository-level form, its end tokens, and that those
// tokens stop generation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>

#include "inference/prompt/fim.h"
#include "inference/prompt/fim_format.h"
#include "inference/decode/generate.h"
#include "tests/inference/golden_util.h"
#include "tests/inference/tiny_engine.h"
#include "tests/default_model.h"

using namespace hearth;
using namespace hearth::inference;
using namespace hearth::inference::testing;
using tokenizer::vocab;

namespace {

const std::string k_fixtures = HEARTH_FIXTURES_DIR;
const std::string k_golden = std::string(HEARTH_SOURCE_DIR) + "/tests/golden/fim/llamacpp_fim_prompts.json";
const std::string k_sp = "\xe2\x96\x81";   // U+2581, the SentencePiece space

vocab open_vocab_file(const std::string & path) {
    auto file = gguf::gguf_file::open(path);
    INFO(path << ": " << (file ? "" : file.message()));
    REQUIRE(file);
    auto v = tokenizer::load_vocab(*file);
    INFO((v ? "" : v.message()));
    REQUIRE(v);
    return std::move(*v);
}

// The llama-spm fixture with `added` appended as control tokens (gen_fim_golden.py's
// derive_vocab does the same to a GGUF file for llama.cpp).
vocab derived_spm(const std::vector<std::string> & added, std::vector<tokenizer::special_id_entry> keys,
                  std::optional<bool> add_space_prefix) {
    auto file = gguf::gguf_file::open(k_fixtures + "/tokenizer/ggml-vocab-llama-spm.gguf");
    REQUIRE(file);
    auto d = tokenizer::read_vocab_data(*file);
    REQUIRE(d);
    for (const auto & t : added) {
        d->tokens.push_back(t);
        d->scores.push_back(0.0f);
        d->token_types.push_back(int32_t(tokenizer::token_type::control));
    }
    for (auto & k : keys) d->special_ids.push_back(std::move(k));
    if (add_space_prefix) d->add_space_prefix = add_space_prefix;
    auto v = vocab::create(std::move(*d));
    INFO((v ? "" : v.message()));
    REQUIRE(v);
    return std::move(*v);
}

// CodeLlama's added ids 32000..32015, its FIM tokens at 32007..32010 named by keys.
vocab codellama_vocab() {
    std::vector<std::string> added;
    for (int i = 0; i < 7; ++i) added.push_back("<added_" + std::to_string(i) + ">");
    for (const char * t : {"<PRE>", "<SUF>", "<MID>", "<EOT>"}) added.push_back(k_sp + t);
    for (int i = 11; i < 16; ++i) added.push_back("<added_" + std::to_string(i) + ">");
    return derived_spm(added,
                       {{"tokenizer.ggml.fim_pre_token_id", 32007}, {"tokenizer.ggml.fim_suf_token_id", 32008},
                        {"tokenizer.ggml.fim_mid_token_id", 32009}, {"tokenizer.ggml.eot_token_id", 32010}},
                       std::nullopt);
}

// CodeGemma's four added tokens, found by their texts; Gemma writes no space prefix.
vocab codegemma_vocab() {
    return derived_spm({"<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|file_separator|>"}, {}, false);
}

// The vocabulary a golden entry was made from, from the fixtures ("default-model" is the default model's).
vocab golden_vocab(const std::string & name) {
    if (name == "starcoder") return open_vocab_file(k_fixtures + "/tokenizer/ggml-vocab-starcoder.gguf");
    if (name == "deepseek-coder") return open_vocab_file(k_fixtures + "/tokenizer/ggml-vocab-deepseek-coder.gguf");
    if (name == "llama-spm+codellama") return codellama_vocab();
    REQUIRE(name == "llama-spm+codegemma");
    return codegemma_vocab();
}

std::vector<token_id> ids(const vocab & v, const std::string & text) { return v.tokenize(text, false, false); }

void append(std::vector<token_id> & out, const std::vector<token_id> & more) { out.insert(out.end(), more.begin(), more.end()); }

// One golden entry: the family detected, its tokens, every case's prompt and the end tokens.
void check_golden_family(const std::string & name, const boost::json::value & entry, const vocab & voc) {
    INFO("vocabulary " << name);
    const std::map<std::string, fim_family> want_family{
        {"starcoder", fim_family::starcoder},         {"deepseek-coder", fim_family::deepseek},
        {"llama-spm+codellama", fim_family::codellama}, {"llama-spm+codegemma", fim_family::codegemma},
        {"default-model", fim_family::qwen}};
    const fim_format f = detect_fim_format(voc);
    CHECK(fim_family_name(f.family) == entry.at("family").as_string());
    CHECK(f.family == want_family.at(std::string(name)));
    CHECK(f.prefix == entry.at("fim").at("pre").to_number<int64_t>());
    CHECK(f.suffix == entry.at("fim").at("suf").to_number<int64_t>());
    CHECK(f.middle == entry.at("fim").at("mid").to_number<int64_t>());
    CHECK(voc.add_bos() == entry.at("add_bos").as_bool());
    for (const auto & c : entry.at("cases").as_array()) {
        INFO("case " << c.at("name").as_string());
        fim_input in;
        in.prefix = std::string(c.at("prefix").as_string());
        in.suffix = std::string(c.at("suffix").as_string());
        auto prompt = build_fim_prompt(voc, in);
        REQUIRE(prompt);
        CHECK(*prompt == json_ids(c.at("prompt_tokens")));
    }
    // The family's end tokens: the ones the vocabulary has, and llama.cpp's end-of-generation
    // verdict on each is ours too (where it says no, only the family's set stops a fill).
    std::vector<token_id> want_ends;
    for (const auto & e : entry.at("family_end_tokens").as_array()) {
        const token_id id = token_id(e.at("id").to_number<int64_t>());
        INFO("end token " << e.at("text").as_string());
        want_ends.push_back(id);
        CHECK(voc.is_eog(id) == e.at("llamacpp_is_eog").as_bool());
    }
    std::sort(want_ends.begin(), want_ends.end());
    CHECK(fim_end_tokens(voc) == want_ends);
}

}  // namespace

TEST_CASE("fim families: the prompt is llama.cpp's, token for token, for every family", "[inference][fim]") {
    const auto golden = read_json_file(k_golden);
    int n_vocabs = 0;
    for (const auto & [name, entry] : golden.at("vocabs").as_object()) {
        if (name == "default-model") continue;   // the next case's
        check_golden_family(std::string(name), entry, golden_vocab(std::string(name)));
        ++n_vocabs;
    }
    CHECK(n_vocabs == 4);
}

TEST_CASE("fim families: the default model's prompt is llama.cpp's, token for token", "[inference][fim][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(model);
    const auto golden = read_json_file(k_golden);
    check_golden_family("default-model", golden.at("vocabs").at("default-model"), open_vocab_file(model));
}

TEST_CASE("fim families: detection says where the tokens came from", "[inference][fim]") {
    const auto star = detect_fim_format(open_vocab_file(k_fixtures + "/tokenizer/ggml-vocab-starcoder.gguf"));
    CHECK(star.family == fim_family::starcoder);
    CHECK_THAT(star.reason, Catch::Matchers::StartsWith("token texts <fim_prefix>, <fim_suffix>, <fim_middle>"));
    CHECK_THAT(star.reason, Catch::Matchers::Contains("<repo_name>, <file_sep>"));
    const auto llama = detect_fim_format(codellama_vocab());
    CHECK(llama.family == fim_family::codellama);
    CHECK_THAT(llama.reason, Catch::Matchers::StartsWith("tokenizer.ggml.fim_pre/suf/mid_token_id name " + k_sp + "<PRE>"));
    CHECK(llama.end_tokens == std::vector<token_id>{2, 32010});
    const auto gemma = detect_fim_format(codegemma_vocab());
    CHECK(gemma.family == fim_family::codegemma);
    CHECK(gemma.end_tokens == std::vector<token_id>{32003});
    CHECK(gemma.file_sep == k_no_token);   // <|file_separator|> ends a fill; no repository-level form

    // The same <|fim_prefix|> tokens without <|file_separator|> are Qwen's.
    const auto qwen_like = detect_fim_format(derived_spm({"<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"}, {}, false));
    CHECK(qwen_like.family == fim_family::qwen);
    // Other spellings llama.cpp knows get the plain layout.
    const auto other = detect_fim_format(derived_spm({"<|code_prefix|>", "<|code_middle|>", "<|code_suffix|>"}, {}, false));
    CHECK(other.family == fim_family::generic);
    CHECK(other.end_tokens.empty());

    const auto none = detect_fim_format(open_vocab_file(k_fixtures + "/tokenizer/ggml-vocab-gpt-2.gguf"));
    CHECK(none.family == fim_family::none);
    CHECK(fim_family_name(none.family) == "none");
    CHECK_THAT(none.reason, Catch::Matchers::Contains("no prefix, suffix and middle tokens"));
}

TEST_CASE("fim families: StarCoder2's repository-level form names the file inside the prefix", "[inference][fim]") {
    const vocab v = open_vocab_file(k_fixtures + "/tokenizer/ggml-vocab-starcoder.gguf");
    fim_input in;
    in.prefix = "def area(r):\n    return ";
    in.suffix = "\n";
    in.path = "src/geometry.py";
    in.repo_name = "shapes";
    in.extra = {{"src/consts.py", "PI = 3.14159\n"}, {"README.md", "Shapes.\n"}};
    auto prompt = build_fim_prompt(v, in);
    REQUIRE(prompt);
    // <repo_name>shapes<file_sep>path\ntext ... <file_sep><fim_prefix>path\nprefix<fim_suffix>suffix<fim_middle>
    const token_id repo = v.find_token("<repo_name>"), sep = v.find_token("<file_sep>");
    std::vector<token_id> want{repo};
    append(want, ids(v, "shapes"));
    want.push_back(sep);
    append(want, ids(v, "src/consts.py\nPI = 3.14159\n"));
    want.push_back(sep);
    append(want, ids(v, "README.md\nShapes.\n"));
    want.push_back(sep);
    want.push_back(v.fim_pre());
    append(want, ids(v, "src/geometry.py\n"));
    append(want, ids(v, in.prefix));
    want.push_back(v.fim_suf());
    append(want, ids(v, in.suffix));
    want.push_back(v.fim_mid());
    CHECK(*prompt == want);
    // A fill ends at <file_sep> (the next file) as well as at <|endoftext|>.
    CHECK(fim_end_tokens(v) == std::vector<token_id>{0, 4, sep});
}

TEST_CASE("fim families: Qwen's repository-level form is unchanged", "[inference][fim][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(model);
    const vocab v = open_vocab_file(model);
    REQUIRE(detect_fim_format(v).family == fim_family::qwen);
    fim_input in;
    in.prefix = "def area(r):\n    return ";
    in.suffix = "\n";
    in.path = "src/geometry.py";
    in.extra = {{"src/consts.py", "PI = 3.14159\n"}};
    auto prompt = build_fim_prompt(v, in);
    REQUIRE(prompt);
    // <|repo_name|>workspace\n<|file_sep|>path\ntext<|file_sep|>path\n<|fim_prefix|>...
    std::vector<token_id> want{v.fim_rep()};
    append(want, ids(v, "workspace\n"));
    want.push_back(v.fim_sep());
    append(want, ids(v, "src/consts.py\nPI = 3.14159\n"));
    want.push_back(v.fim_sep());
    append(want, ids(v, "src/geometry.py\n"));
    want.push_back(v.fim_pre());
    append(want, ids(v, in.prefix));
    want.push_back(v.fim_suf());
    append(want, ids(v, in.suffix));
    want.push_back(v.fim_mid());
    CHECK(*prompt == want);
}

TEST_CASE("fim families: without file separators the extra context is left out", "[inference][fim]") {
    std::vector<vocab> vocabs;
    vocabs.push_back(open_vocab_file(k_fixtures + "/tokenizer/ggml-vocab-deepseek-coder.gguf"));
    vocabs.push_back(codellama_vocab());
    vocabs.push_back(codegemma_vocab());
    for (const auto & v : vocabs) {
        INFO(fim_family_name(detect_fim_format(v).family));
        fim_input in;
        in.prefix = "x = ";
        in.suffix = "\n";
        auto plain = build_fim_prompt(v, in);
        in.extra = {{"other.py", "y = 2\n"}};
        in.path = "main.py";
        auto with_extra = build_fim_prompt(v, in);
        REQUIRE(plain);
        REQUIRE(with_extra);
        CHECK(*plain == *with_extra);
        CHECK(plain->front() == v.bos());
    }
}

TEST_CASE("fim families: a family's end token stops generation like an end-of-generation token",
          "[inference][fim][generate]") {
    auto & t = tiny_model(256);
    auto voc = tokenizer::load_vocab(t.file);
    REQUIRE(voc);
    const auto prompt = voc->tokenize("Once upon a time", true, false);
    auto run = [&](std::vector<token_id> end_tokens) {
        sequence seq(t.eng->make_cache(kernels::tensor_type::f16, 256));
        std::vector<float> logits;
        REQUIRE(prefill(*t.eng, seq, prompt, logits).has_value());
        generation_params params;
        params.n_predict = 12;
        params.end_tokens = std::move(end_tokens);
        std::string streamed;
        auto gen = generate(*t.eng, *voc, seq, logits, params, {}, [&](std::string_view p) { streamed += p; });
        REQUIRE(gen);
        CHECK(streamed == gen->text);
        return std::move(*gen);
    };
    const auto free_run = run({});
    REQUIRE(free_run.tokens.size() == 12);
    REQUIRE(free_run.finish == finish_reason::max_tokens);
    // The fourth token (first seen there) declared an end token: three tokens, and it is not in the text.
    const auto it = std::find(free_run.tokens.begin(), free_run.tokens.end(), free_run.tokens[3]);
    const size_t at = size_t(it - free_run.tokens.begin());
    const auto stopped = run({free_run.tokens[at]});
    CHECK(stopped.finish == finish_reason::end_of_generation);
    CHECK(stopped.tokens == std::vector<token_id>(free_run.tokens.begin(), free_run.tokens.begin() + long(at)));
    std::string want_text;
    for (size_t i = 0; i < at; ++i) want_text += voc->piece(free_run.tokens[i]);
    CHECK(stopped.text == want_text);
}
