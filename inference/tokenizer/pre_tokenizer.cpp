#include "inference/tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <limits>

namespace hearth::inference::tokenizer {

namespace {

// The expressions as the models' tokenizer.json files state them. PCRE2 handles the
// case-insensitive groups and Unicode classes directly, so no rewriting is needed.
constexpr const char * k_gpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
constexpr const char * k_llama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char * k_qwen2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char * k_qwen35 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char * k_gpt4o =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char * k_tekken =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
    "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char * k_deepseek3_main =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
    "| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char * k_bloom = " ?[^(\\s|.,!?…。，、।۔،)]+";

struct pre_entry {
    std::initializer_list<std::string_view> names;
    std::initializer_list<const char *> expressions;
};

// Names and expressions as llama.cpp's llama-vocab.cpp maps tokenizer.ggml.pre.
const std::initializer_list<pre_entry> & pre_table() {
    static const std::initializer_list<pre_entry> table = {
        {{"", "default"}, {"[\\p{P}\\$\\+<=>\\^~\\|]+", k_gpt2, "\\p{N}+", "[0-9][0-9][0-9]"}},
        {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
          "jina-v5-nano", "dbrx", "smaug-bpe", "chatglm-bpe", "glm4"},
         {k_llama3}},
        {{"deepseek-llm"},
         {"[\\r\\n]",
          "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
          "\\s?[!-/:-~！-／：-～‘-‟　-。]+", "\\s+$", "[一-龥ࠀ-一가-퟿]+", "\\p{N}+"}},
        {{"deepseek-coder"}, {"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}"}},
        {{"deepseek-v3", "hunyuan-dense", "joyai-llm"}, {"\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+", k_deepseek3_main}},
        {{"falcon"}, {"[\\p{P}\\$\\+<=>\\^~\\|`]+", k_gpt2, "[0-9][0-9][0-9]"}},
        {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
         {"\\p{N}", k_gpt2}},
        {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
          "modern-bert", "mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4"},
         {k_gpt2}},
        {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open", "grok-2"},
         {k_qwen2}},
        {{"qwen35"}, {k_qwen35}},
        {{"poro-chat", "bloom", "gpt3-finnish"}, {k_bloom}},
        {{"viking"}, {k_bloom, "\\p{N}"}},
        {{"tekken"}, {k_tekken}},
        {{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, {k_gpt4o}},
        {{"seed-coder"},
         {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
        {{"bailingmoe", "bailingmoe2", "llada-moe"},
         {"'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"}},
        {{"minicpm5"},
         {"\\p{N}{1,3}",
          "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    };
    return table;
}

struct code_deleter {
    void operator()(pcre2_code * c) const { pcre2_code_free(c); }
};
struct match_data_deleter {
    void operator()(pcre2_match_data * m) const { pcre2_match_data_free(m); }
};
struct match_context_deleter {
    void operator()(pcre2_match_context * m) const { pcre2_match_context_free(m); }
};
struct jit_stack_deleter {
    void operator()(pcre2_jit_stack * s) const { pcre2_jit_stack_free(s); }
};

// One JIT stack per thread, grown on demand: long whitespace runs under `\s+(?!\S)`
// backtrack through every position and overflow the default 32 KiB machine stack.
pcre2_match_context * thread_match_context() {
    thread_local std::unique_ptr<pcre2_jit_stack, jit_stack_deleter> stack(
        pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr));
    thread_local std::unique_ptr<pcre2_match_context, match_context_deleter> context([] {
        pcre2_match_context * c = pcre2_match_context_create(nullptr);
        return c;
    }());
    thread_local bool assigned = false;
    if (!assigned && context && stack) {
        pcre2_jit_stack_assign(context.get(), nullptr, stack.get());
        assigned = true;
    }
    return context.get();
}

}  // namespace

struct pre_tokenizer::impl {
    std::vector<std::string> expressions;
    std::vector<std::unique_ptr<pcre2_code, code_deleter>> codes;
};

result<std::vector<std::string>> pre_tokenizer_expressions(std::string_view pre) {
    for (const auto & e : pre_table()) {
        for (const auto name : e.names) {
            if (name == pre) return std::vector<std::string>(e.expressions.begin(), e.expressions.end());
        }
    }
    return fail("tokenizer.ggml.pre: unknown pre-tokenizer '", std::string(pre),
                "' (expected one llama.cpp knows, e.g. qwen2, llama-bpe, gpt-2, starcoder, deepseek-coder)");
}

result<pre_tokenizer> pre_tokenizer::create(std::string_view pre) {
    auto exprs = pre_tokenizer_expressions(pre);
    if (!exprs) return exprs.error();
    return from_expressions(std::move(*exprs));
}

result<pre_tokenizer> pre_tokenizer::from_expressions(std::vector<std::string> expressions) {
    auto p = std::make_unique<impl>();
    for (const auto & expr : expressions) {
        int err = 0;
        PCRE2_SIZE err_off = 0;
        pcre2_code * code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(expr.data()), expr.size(),
                                          PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &err_off, nullptr);
        if (!code) {
            std::array<PCRE2_UCHAR, 256> msg{};
            pcre2_get_error_message(err, msg.data(), msg.size());
            return fail("pre-tokenizer expression '", expr, "': ", reinterpret_cast<const char *>(msg.data()),
                        " at offset ", uint64_t(err_off));
        }
        // JIT is an optimisation; where it is unavailable the interpreter gives the same matches.
        pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
        p->codes.emplace_back(code);
    }
    p->expressions = std::move(expressions);
    return pre_tokenizer(std::move(p));
}

pre_tokenizer::pre_tokenizer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
pre_tokenizer::pre_tokenizer(pre_tokenizer &&) noexcept = default;
pre_tokenizer & pre_tokenizer::operator=(pre_tokenizer &&) noexcept = default;
pre_tokenizer::~pre_tokenizer() = default;

const std::vector<std::string> & pre_tokenizer::expressions() const { return impl_->expressions; }

std::vector<byte_span> pre_tokenizer::split(std::string_view text) const {
    std::vector<byte_span> spans;
    if (text.empty()) return spans;
    spans.push_back({0, uint32_t(text.size())});
    if (impl_->codes.empty()) return spans;

    pcre2_match_context * mctx = thread_match_context();
    std::vector<byte_span> next;
    for (const auto & code : impl_->codes) {
        std::unique_ptr<pcre2_match_data, match_data_deleter> md(pcre2_match_data_create_from_pattern(code.get(), nullptr));
        if (!md) return spans;   // out of memory: the coarser split is still a valid cover
        next.clear();
        next.reserve(spans.size() * 2);
        for (const auto span : spans) {
            // The subject is the piece alone, so `$`, lookaheads and lookbehinds see its
            // boundaries as the ends of the text, as llama.cpp's per-piece matching does.
            const auto * subject = reinterpret_cast<PCRE2_SPTR>(text.data() + span.offset);
            const size_t len = span.length;
            size_t pos = 0;     // next byte not yet assigned to a piece
            size_t start = 0;   // where the next match attempt starts
            while (start < len) {
                const int rc = pcre2_match(code.get(), subject, len, start, 0, md.get(), mctx);
                if (rc < 0) break;   // no match (or a resource limit): the rest stays one piece
                const PCRE2_SIZE * ov = pcre2_get_ovector_pointer(md.get());
                const size_t m_begin = ov[0];
                const size_t m_end = ov[1];
                if (m_end <= m_begin) {
                    // An empty match isolates nothing; step over one character and go on.
                    start = m_begin + 1;
                    while (start < len && (subject[start] & 0xC0) == 0x80) ++start;
                    continue;
                }
                if (m_begin > pos) next.push_back({uint32_t(span.offset + pos), uint32_t(m_begin - pos)});
                next.push_back({uint32_t(span.offset + m_begin), uint32_t(m_end - m_begin)});
                pos = start = m_end;
            }
            if (pos < len) next.push_back({uint32_t(span.offset + pos), uint32_t(len - pos)});
        }
        spans.swap(next);
    }
    return spans;
}

}  // namespace hearth::inference::tokenizer
