// The default model's tokenizer against llama.cpp's own output for it (tests/golden/<model>/,
// made by tests/golden/gen_golden.py): whole source files, the FIM and chat prompts of
// completions.json (special tokens parsed), the generated tokens' pieces, and the shared
// qwen2 cases as llama.cpp tokenizes them. Skips when the model or the golden files are
// absent; fails when the model is not the one the golden files were made from.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <openssl/evp.h>

#include <cstdio>
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
namespace fs = std::filesystem;

namespace {

std::string sha256_file(const std::string & path) {
    std::FILE * f = std::fopen(path.c_str(), "rb");
    REQUIRE(f);
    EVP_MD_CTX * ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
    std::vector<unsigned char> buf(1 << 20);
    for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), f)) > 0;) EVP_DigestUpdate(ctx, buf.data(), n);
    std::fclose(f);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx, md, &len);
    EVP_MD_CTX_free(ctx);
    std::string hex;
    char two[3];
    for (unsigned i = 0; i < len; ++i) {
        std::snprintf(two, sizeof two, "%02x", md[i]);
        hex += two;
    }
    return hex;
}

boost::json::value read_json(const fs::path & path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return boost::json::parse(ss.str());
}

std::vector<token_id> ids_of(const boost::json::value & v) {
    std::vector<token_id> out;
    for (const auto & x : v.as_array()) out.push_back(token_id(x.to_number<int64_t>()));
    return out;
}

std::string str_of(const boost::json::value & v) {
    return std::string(v.as_string());
}

std::string show(const std::vector<token_id> & ids) {
    std::string s;
    for (const auto id : ids) s += " " + std::to_string(id);
    return s;
}

// Index of the first difference, for readable failures on long files.
size_t first_diff(const std::vector<token_id> & a, const std::vector<token_id> & b) {
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    return i;
}

struct golden_env {
    std::string model;
    fs::path dir;
    std::string sha;
};

// The default model's golden folder (tests/golden/<the model file's stem>/) and its SHA-256.
golden_env find_golden(const std::string & model) {
    const fs::path dir = fs::path(HEARTH_SOURCE_DIR) / "tests" / "golden" / fs::path(model).stem();
    INFO("the default model " << model << " has no llama.cpp goldens in " << dir.string());
    REQUIRE(fs::exists(dir / "tokenize.json"));
    static const std::string sha = sha256_file(model);
    return golden_env{model, dir, sha};
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

void check_model(const golden_env & env, const boost::json::object & doc) {
    INFO("golden files were made from model sha256 " << str_of(doc.at("model_sha256")));
    REQUIRE(str_of(doc.at("model_sha256")) == env.sha);
}

// One golden file of the default model, checked to be made from it, and the model's vocabulary.
struct golden_file {
    boost::json::object doc;
    vocab v;
};

golden_file load_golden(const std::string & model, const char * name) {
    const auto env = find_golden(model);
    auto doc = read_json(env.dir / name).as_object();
    check_model(env, doc);
    return {std::move(doc), open_vocab(env.model)};
}

}  // namespace

TEST_CASE("llama.cpp golden: source files tokenize to llama.cpp's ids", "[inference][tokenizer][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(model);
    const auto [doc, v] = load_golden(model, "tokenize.json");
    const auto & files = doc.at("files").as_array();
    REQUIRE(!files.empty());
    for (const auto & f : files) {
        const auto & o = f.as_object();
        const std::string text = str_of(o.at("text"));
        const auto want = ids_of(o.at("ids"));
        const auto got = v.tokenize(text, false, false);
        const size_t d = first_diff(got, want);
        INFO(str_of(o.at("file")) << ": " << text.size() << " bytes, " << want.size() << " tokens; first difference at "
                                  << d << " (got " << (d < got.size() ? got[d] : -1) << ", want "
                                  << (d < want.size() ? want[d] : -1) << ")");
        CHECK(got == want);
        CHECK(v.detokenize(got) == text);
    }
}

TEST_CASE("llama.cpp golden: FIM and chat prompts with special tokens", "[inference][tokenizer][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(model);
    const auto [doc, v] = load_golden(model, "completions.json");
    for (const auto & r : doc.at("results").as_array()) {
        const auto & o = r.as_object();
        INFO(str_of(o.at("name")));
        // llama.cpp was asked for add_bos=True, special=True; the model adds no BOS.
        const auto got = v.tokenize(str_of(o.at("prompt")), true, true);
        const auto want = ids_of(o.at("prompt_tokens"));
        INFO("want" << show(want) << "\n got" << show(got));
        CHECK(got == want);
        // Pieces of the generated tokens, special tokens written out (pieces that are not
        // whole UTF-8 were stored escaped, so they are left out).
        const auto gen = ids_of(o.at("generated_tokens"));
        const auto & pieces = o.at("generated_pieces").as_array();
        REQUIRE(pieces.size() == gen.size());
        for (size_t i = 0; i < gen.size(); ++i) {
            const std::string want_piece = str_of(pieces[i]);
            if (want_piece.find('\\') != std::string::npos) continue;
            CHECK(v.piece(gen[i], true) == want_piece);
        }
        const std::string text = str_of(o.at("generated_text"));
        if (text.find('\\') == std::string::npos) CHECK(v.detokenize(gen, false, true) == text);
        if (o.at("stopped_on_eog").as_bool()) CHECK(v.is_eog(gen.back()));
        for (size_t i = 0; i + 1 < gen.size(); ++i) CHECK(!v.is_eog(gen[i]));
    }
}

TEST_CASE("llama.cpp golden: the qwen2 cases as llama.cpp tokenizes them", "[inference][tokenizer][default-model]") {
    HEARTH_DEFAULT_MODEL_OR_SKIP(model);
    const auto [doc, v] = load_golden(model, "vocab_qwen2.json");
    for (const auto & c : doc.at("cases").as_array()) {
        const auto & o = c.as_object();
        const auto got = v.tokenize(str_of(o.at("text")), false, false);
        INFO("case " << o.at("index").to_number<int64_t>());
        CHECK(got == ids_of(o.at("llama_cpp")));
    }
}
