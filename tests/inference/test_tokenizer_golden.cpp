// Golden tokenizer tests: llama.cpp's vocab GGUFs with their .inp/.out cases (expected ids
// from Hugging Face tokenizers, and for stories260K from llama.cpp itself), run exactly as
// llama.cpp's test-tokenizer-0 runs them: add_special = false, parse_special = false.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "inference/gguf/gguf_file.h"
#include "inference/tokenizer/vocab.h"
#include "tests/default_model.h"

using namespace hearth::inference;
using namespace hearth::inference::tokenizer;

namespace {

std::string read_all(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct tok_case {
    std::string text;
    std::vector<token_id> ids;
};

// FORMAT.md: texts end with "\n__ggml_vocab_test__\n"; line k of .out holds text k's ids.
std::vector<tok_case> read_cases(const std::string & base) {
    const std::string inp = read_all(base + ".inp");
    const std::string out = read_all(base + ".out");
    REQUIRE(!inp.empty());
    const std::string marker = "\n__ggml_vocab_test__\n";
    std::vector<tok_case> cases;
    for (size_t pos = 0; pos < inp.size();) {
        const size_t m = inp.find(marker, pos);
        REQUIRE(m != std::string::npos);
        cases.push_back({inp.substr(pos, m - pos), {}});
        pos = m + marker.size();
    }
    std::istringstream lines(out);
    std::string line;
    size_t k = 0;
    while (std::getline(lines, line)) {
        REQUIRE(k < cases.size());
        std::istringstream ids(line);
        long long id;
        while (ids >> id) cases[k].ids.push_back(token_id(id));
        ++k;
    }
    REQUIRE(k == cases.size());
    return cases;
}

std::string show(const std::vector<token_id> & ids) {
    std::string s;
    for (const auto id : ids) s += " " + std::to_string(id);
    return s;
}

vocab open_vocab(const std::string & path) {
    auto file = gguf::gguf_file::open(path);
    INFO(path << ": " << (file ? "" : file.message()));
    REQUIRE(file);
    auto v = load_vocab(*file);
    INFO((v ? "" : v.message()));
    REQUIRE(v);
    return std::move(*v);
}

void check_cases(const vocab & v, const std::string & cases_base, size_t expected_cases) {
    const auto cases = read_cases(cases_base);
    CHECK(cases.size() == expected_cases);
    size_t passed = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        const auto got = v.tokenize(cases[i].text, /*add_special=*/false, /*parse_special=*/false);
        INFO("case " << i << " text '" << cases[i].text << "'\n want" << show(cases[i].ids) << "\n  got" << show(got));
        CHECK(got == cases[i].ids);
        passed += got == cases[i].ids;
    }
    CHECK(passed == cases.size());
}

const std::string k_fixtures = HEARTH_FIXTURES_DIR;

}  // namespace

TEST_CASE("tokenizer golden: fixture vocabularies reproduce their expected ids", "[inference][tokenizer]") {
    const std::string name = GENERATE(as<std::string>{}, "llama-spm", "phi-3", "gpt-2", "starcoder", "deepseek-coder");
    const std::string base = k_fixtures + "/tokenizer/ggml-vocab-" + name + ".gguf";
    INFO("vocab " << name);
    const vocab v = open_vocab(base);
    check_cases(v, base, 46);
}

TEST_CASE("tokenizer golden: stories260K cases match llama.cpp", "[inference][tokenizer]") {
    const std::string base = k_fixtures + "/models/stories260K-F32.gguf";
    const vocab v = open_vocab(base);
    CHECK(v.kind() == vocab_kind::spm);
    CHECK(v.n_tokens() == 512);
    CHECK(v.bos() == 1);
    CHECK(v.eos() == 2);
    CHECK(v.unk() == 0);
    CHECK(v.add_bos());         // no add_bos key: the SPM default
    CHECK(!v.add_eos());
    CHECK(v.pad() == k_no_token);   // stored as 4294967295, meaning none
    CHECK(v.is_eog(2));
    check_cases(v, base, 61);
    // The golden runs tokenized "Once upon a time" with BOS (fixtures/golden/greedy_summary.txt).
    const auto ids = v.tokenize("Once upon a time", true, true);
    REQUIRE(!ids.empty());
    CHECK(ids.front() == 1);
}

TEST_CASE("tokenizer golden: qwen2 cases with the default model's vocabulary", "[inference][tokenizer][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(model);
    const vocab v = open_vocab(model);
    REQUIRE(v.pre() == "qwen2");   // the pinned default model is Qwen2.5-Coder
    check_cases(v, k_fixtures + "/tokenizer/ggml-vocab-qwen2.gguf", 46);
}

TEST_CASE("tokenizer: the default model's special ids (Qwen2.5-Coder)", "[inference][tokenizer][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(model);
    const vocab v = open_vocab(model);
    REQUIRE(v.find_token("<|fim_prefix|>") != k_no_token);
    CHECK(v.kind() == vocab_kind::bpe);
    CHECK(!v.add_bos());
    // No fim_*_token_id keys in the file: found by their texts, as llama.cpp does.
    CHECK(v.fim_pre() == v.find_token("<|fim_prefix|>"));
    CHECK(v.fim_suf() == v.find_token("<|fim_suffix|>"));
    CHECK(v.fim_mid() == v.find_token("<|fim_middle|>"));
    CHECK(v.fim_pad() == v.find_token("<|fim_pad|>"));
    CHECK(v.fim_rep() == v.find_token("<|repo_name|>"));
    CHECK(v.fim_sep() == v.find_token("<|file_sep|>"));
    // End of generation: EOS, <|endoftext|>, <|im_end|> and the FIM pad/repo/file separators.
    for (const char * t : {"<|endoftext|>", "<|im_end|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"}) {
        INFO(t);
        CHECK(v.is_eog(v.find_token(t)));
    }
    CHECK(v.is_eog(v.eos()));
    CHECK(!v.is_eog(v.fim_mid()));
    CHECK(!v.is_eog(v.find_token("<|im_start|>")));

    const std::string prefix = "def add(a, b):\n    ";
    const std::string suffix = "\n\nprint(add(1, 2))\n";
    const auto ids = v.tokenize("<|fim_prefix|>" + prefix + "<|fim_suffix|>" + suffix + "<|fim_middle|>", false, true);
    REQUIRE(ids.size() > 3);
    CHECK(ids.front() == v.fim_pre());
    CHECK(ids.back() == v.fim_mid());
    // The same prompt built from ids gives the same tokens: specials never merge with text.
    std::vector<token_id> built{v.fim_pre()};
    for (const auto id : v.tokenize(prefix, false, false)) built.push_back(id);
    built.push_back(v.fim_suf());
    for (const auto id : v.tokenize(suffix, false, false)) built.push_back(id);
    built.push_back(v.fim_mid());
    CHECK(ids == built);
    CHECK(v.detokenize(ids) == prefix + suffix);
}
