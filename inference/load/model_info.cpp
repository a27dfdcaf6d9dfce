#include "inference/load/model_info.h"

#include "inference/cache/k_smoothing.h"
#include "inference/prompt/chat_template.h"
#include "inference/prompt/fim_format.h"
#include "inference/tokenizer/vocab.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <string_view>

namespace hearth::inference {
namespace {

using kernels::tensor_type;

// Metadata numbers are untrusted: products saturate instead of wrapping, so a lying file
// shows an absurd cost rather than a small wrong one.
constexpr uint64_t k_saturated = std::numeric_limits<uint64_t>::max();
uint64_t mul_sat(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? k_saturated : r;
}
uint64_t add_sat(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? k_saturated : r;
}

// An hparam that is one integer, or one per layer (some architectures): the largest value.
result<uint64_t> hparam(const gguf::gguf_file & f, const std::string & key, bool & present) {
    present = false;
    const gguf::metadata_value * v = f.find(key);
    if (!v) return uint64_t{0};
    present = true;
    if (v->type == gguf::value_type::array) {
        auto arr = f.get_int_array(key);
        if (!arr) return arr.error();
        int64_t best = 0;
        for (const int64_t x : **arr) {
            if (x < 0) return fail("metadata '", key, "' holds ", x, ", expected non-negative integers");
            best = std::max(best, x);
        }
        return static_cast<uint64_t>(best);
    }
    auto u = f.get_uint(key);
    if (!u) return u.error();
    return **u;
}

struct fim_names {
    std::string_view prefix, suffix, middle;
};
constexpr fim_names k_fim_texts[] = {
    {"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"},   // Qwen2.5-Coder, StarCoder2 chat variants
    {"<fim_prefix>", "<fim_suffix>", "<fim_middle>"},         // StarCoder
    {"<fim-prefix>", "<fim-suffix>", "<fim-middle>"},         // SantaCoder
    // DeepSeek-Coder: fullwidth bars U+FF5C around "fim" + U+2581 (the SentencePiece space)
    {"<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "hole\xef\xbd\x9c>",
     "<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>"},
    {"<|fim\xe2\x96\x81" "begin|>", "<|fim\xe2\x96\x81" "hole|>", "<|fim\xe2\x96\x81" "end|>"},
    {"<|fim_begin|>", "<|fim_hole|>", "<|fim_end|>"},
    {"\xe2\x96\x81<PRE>", "\xe2\x96\x81<SUF>", "\xe2\x96\x81<MID>"},  // CodeLlama (SentencePiece)
    {"<PRE>", "<SUF>", "<MID>"},
};

result<fim_tokens> find_fim(const gguf::gguf_file & f, std::span<const std::string_view> tokens,
                            std::vector<std::string> & notes) {
    fim_tokens out;
    auto from_id = [&](const char * key, std::optional<fim_token> & slot) -> status {
        auto id = f.get_uint(key);
        if (!id) return id.error();
        if (!*id) return {};
        if (**id >= tokens.size()) {
            notes.push_back(std::string(key) + " = " + std::to_string(**id) + " is outside the vocabulary of " +
                            std::to_string(tokens.size()) + " tokens; ignored");
            return {};
        }
        slot = fim_token{static_cast<uint32_t>(**id), std::string(tokens[**id])};
        return {};
    };
    for (const auto & keys : {std::array<const char *, 3>{"tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.fim_suf_token_id",
                                                          "tokenizer.ggml.fim_mid_token_id"},
                              std::array<const char *, 3>{"tokenizer.ggml.prefix_token_id", "tokenizer.ggml.suffix_token_id",
                                                          "tokenizer.ggml.middle_token_id"}}) {
        fim_tokens t;
        for (const auto & s : {from_id(keys[0], t.prefix), from_id(keys[1], t.suffix), from_id(keys[2], t.middle)})
            if (!s) return s.error();
        if (t.complete()) {
            t.source = "metadata";
            return t;
        }
    }
    // No ids in the metadata: look for a well-known spelling among the token texts.
    for (const auto & names : k_fim_texts) {
        fim_tokens t;
        for (size_t id = 0; id < tokens.size(); ++id) {
            const std::string_view s = tokens[id];
            if (s == names.prefix) t.prefix = fim_token{static_cast<uint32_t>(id), std::string(s)};
            else if (s == names.suffix) t.suffix = fim_token{static_cast<uint32_t>(id), std::string(s)};
            else if (s == names.middle) t.middle = fim_token{static_cast<uint32_t>(id), std::string(s)};
        }
        if (t.complete()) {
            t.source = "token texts";
            return t;
        }
    }
    return out;
}

std::optional<uint64_t> row_bytes(tensor_type type, uint64_t n) {
    const auto & traits = kernels::tensor_type_info(type);
    if (n == 0 || n % static_cast<uint64_t>(traits.block_size) != 0) return std::nullopt;
    return n / static_cast<uint64_t>(traits.block_size) * traits.type_size;
}

void fill_hparams(model_info & m, const gguf::gguf_file & f, result<void> & err) {
    const std::string a = m.architecture + ".";
    struct want {
        const char * key;
        uint64_t * out;
        bool * present;
    };
    bool has_ctx = false, has_layer = false, has_embd = false, has_ff = false, has_head = false, has_head_kv = false,
         has_k = false, has_v = false, has_vocab = false;
    uint64_t vocab_size = 0;
    const want wants[] = {
        {"context_length", &m.n_ctx_train, &has_ctx},         {"block_count", &m.n_layer, &has_layer},
        {"embedding_length", &m.n_embd, &has_embd},           {"feed_forward_length", &m.n_ff, &has_ff},
        {"attention.head_count", &m.n_head, &has_head},       {"attention.head_count_kv", &m.n_head_kv, &has_head_kv},
        {"attention.key_length", &m.head_dim_k, &has_k},      {"attention.value_length", &m.head_dim_v, &has_v},
        {"vocab_size", &vocab_size, &has_vocab},
    };
    for (const auto & w : wants) {
        auto v = hparam(f, a + w.key, *w.present);
        if (!v) {
            err = v.error();
            return;
        }
        *w.out = *v;
    }
    for (const auto & [present, key] : {std::pair{has_ctx, "context_length"}, std::pair{has_layer, "block_count"},
                                        std::pair{has_embd, "embedding_length"}, std::pair{has_head, "attention.head_count"}})
        if (!present) m.notes.push_back("no " + a + key + " in the file");
    if (!has_head_kv) m.n_head_kv = m.n_head;  // llama.cpp's default: no grouped-query attention
    if (!has_k) {
        if (m.n_head != 0 && m.n_embd % m.n_head == 0) m.head_dim_k = m.n_embd / m.n_head;
        else if (m.n_head != 0) m.notes.push_back("embedding_length is not a multiple of head_count");
    }
    if (!has_v) m.head_dim_v = m.head_dim_k;
    if (m.n_vocab == 0) m.n_vocab = vocab_size;
    if (m.n_vocab == 0)
        if (const auto * t = f.find_tensor("token_embd.weight"); t && t->n_dims >= 2) m.n_vocab = static_cast<uint64_t>(t->ne[1]);
}

compute_estimate estimate_compute(const model_info & m, uint64_t n_ctx, uint64_t n_batch) {
    compute_estimate c;
    const uint64_t q = mul_sat(m.n_head, m.head_dim_k);
    const uint64_t kv = mul_sat(m.n_head_kv, add_sat(m.head_dim_k, m.head_dim_v));
    const uint64_t attn_out = mul_sat(m.n_head, m.head_dim_v);
    // x, residual and normed x; q, k, v; attention output; FFN gate and up (the widest part).
    uint64_t floats = add_sat(add_sat(mul_sat(3, m.n_embd), add_sat(q, kv)), add_sat(attn_out, mul_sat(2, m.n_ff)));
    c.activations = mul_sat(mul_sat(floats, 4), n_batch);
    const uint64_t widest = std::max({m.n_embd, m.n_ff, attn_out});
    c.quantized_input = mul_sat(n_batch, (widest + 31) / 32 * 34);  // q8_0 rows: 34 bytes per 32 values
    c.attention_scores = mul_sat(mul_sat(mul_sat(m.n_head, n_ctx), n_batch), 4);
    c.logits = mul_sat(m.n_vocab, 4);
    return c;
}

}  // namespace

std::optional<uint64_t> kv_bytes_per_token(const kv_types & types, uint64_t n_layer, uint64_t n_head_kv, uint64_t head_dim_k,
                                           uint64_t head_dim_v) {
    const auto k = row_bytes(types.k, head_dim_k);
    const auto v = row_bytes(types.v, head_dim_v);
    if (!k || !v) return std::nullopt;
    return mul_sat(mul_sat(n_layer, n_head_kv), add_sat(*k, *v));
}

result<model_info> describe_model(const gguf::gguf_file & f, const memory_options & opts) {
    model_info m;
    m.gguf_version = f.version();
    m.file_size = f.file_size();
    auto arch = f.get_string("general.architecture");
    if (!arch) return arch.error();
    if (!*arch || (*arch)->empty()) return fail("no general.architecture in the file: cannot tell what model this is");
    m.architecture = std::string(**arch);
    auto name = f.get_string("general.name");
    if (!name) return name.error();
    if (*name) m.name = std::string(**name);

    std::map<std::string, tensor_type_usage> by_type;
    bool k_bias = false, k_norm = false;   // a smoothed K needs the first and not the second
    for (const auto & t : f.tensors()) {
        k_bias = k_bias || t.name.ends_with("attn_k.bias");
        k_norm = k_norm || t.name.ends_with("attn_k_norm.weight");
        const auto n = static_cast<uint64_t>(t.n_elements());
        m.n_params += n;
        auto & u = by_type[std::string(kernels::tensor_type_info(t.type).name)];
        u.type = kernels::tensor_type_info(t.type).name;
        u.n_tensors += 1;
        u.n_elements += n;
        u.size_bytes += t.size_bytes;
    }
    m.n_tensors = f.tensors().size();
    m.weights_bytes = f.tensor_data_bytes();
    for (auto & [_, u] : by_type) m.tensor_types.push_back(u);
    std::sort(m.tensor_types.begin(), m.tensor_types.end(),
              [](const auto & a, const auto & b) { return a.size_bytes != b.size_bytes ? a.size_bytes > b.size_bytes : a.type < b.type; });

    // Tokenizer (types of tokens/model/pre are checked by the reader).
    auto tokens = f.get_string_array("tokenizer.ggml.tokens");
    if (!tokens) return tokens.error();
    const std::span<const std::string_view> token_list = *tokens ? **tokens : std::span<const std::string_view>{};
    m.n_vocab = token_list.size();
    for (const auto & [key, out] : {std::pair{"tokenizer.ggml.model", &m.tokenizer_model}, std::pair{"tokenizer.ggml.pre", &m.tokenizer_pre}}) {
        auto s = f.get_string(key);
        if (!s) return s.error();
        if (*s) *out = std::string(**s);
    }
    auto fim = find_fim(f, token_list, m.notes);
    if (!fim) return fim.error();
    m.fim = std::move(*fim);
    auto tmpl = f.get_string("tokenizer.chat_template");
    if (!tmpl) return tmpl.error();
    m.has_chat_template = tmpl->has_value();
    m.chat_template_bytes = *tmpl ? (*tmpl)->size() : 0;
    if (auto voc = tokenizer::load_vocab(f); !voc) {
        m.chat_format_reason = "the vocabulary does not load: " + voc.message();
        m.fim_format = "none";
        m.fim_format_reason = m.chat_format_reason;
    } else {
        const auto fim_fmt = detect_fim_format(*voc);
        m.fim_format = std::string(fim_family_name(fim_fmt.family));
        m.fim_format_reason = fim_fmt.reason;
        if (auto chat = choose_chat_format("", *tmpl ? **tmpl : std::string_view(), *voc); !chat) {
            m.chat_format_reason = chat.message();
        } else {
            m.chat_format = std::string(chat_format_name(chat->format));
            m.chat_format_reason = std::move(chat->reason);
        }
    }

    result<void> err;
    fill_hparams(m, f, err);
    if (!err) return err.error();

    for (const kv_types t : {kv_types(tensor_type::f16), kv_types(tensor_type::f16, tensor_type::q8_0),
                             kv_types(tensor_type::q8_0, tensor_type::f16), kv_types(tensor_type::q8_0),
                             kv_types(tensor_type::q4_0)}) {
        kv_cache_cost c;
        c.type = kv_types_name(t);
        c.k_smoothed = k_bias && !k_norm && k_smoothing::applies_to(t.k);
        c.bytes_per_token = kv_bytes_per_token(t, m.n_layer, m.n_head_kv, m.head_dim_k, m.head_dim_v);
        if (c.bytes_per_token) {
            if (m.n_ctx_train) c.bytes_model_ctx = mul_sat(*c.bytes_per_token, m.n_ctx_train);
        } else if (m.head_dim_k == 0) {
            c.why_not = "head size unknown";
        } else {
            const int64_t block = std::max(kernels::tensor_type_info(t.k).block_size, kernels::tensor_type_info(t.v).block_size);
            c.why_not = "head size " + std::to_string(m.head_dim_k) + (m.head_dim_v != m.head_dim_k ? "/" + std::to_string(m.head_dim_v) : "") +
                        " is not a multiple of " + std::to_string(block);
        }
        m.kv_costs.push_back(std::move(c));
    }

    memory_estimate & mem = m.memory;
    mem.n_ctx = m.n_ctx_train ? std::min(opts.n_ctx, m.n_ctx_train) : opts.n_ctx;
    mem.n_files = opts.n_files;
    mem.n_batch = std::min(opts.n_batch, mem.n_ctx);
    mem.weights_bytes = m.weights_bytes;
    auto bpt = kv_bytes_per_token(opts.kv_type, m.n_layer, m.n_head_kv, m.head_dim_k, m.head_dim_v);
    mem.kv_type = kv_types_name(opts.kv_type);
    if (!bpt && opts.kv_type != kv_types(tensor_type::f16)) {
        bpt = kv_bytes_per_token(tensor_type::f16, m.n_layer, m.n_head_kv, m.head_dim_k, m.head_dim_v);
        if (bpt) {
            m.notes.push_back("KV cache type " + mem.kv_type + " cannot hold this model's heads; the estimate uses f16");
            mem.kv_type = "f16";
        }
    }
    if (!bpt) m.notes.push_back("KV cache size unknown (head size missing); the estimate leaves it out");
    mem.kv_bytes = mul_sat(mul_sat(mem.n_files, mem.n_ctx), bpt.value_or(0));
    mem.compute = estimate_compute(m, mem.n_ctx, mem.n_batch);
    return m;
}

}  // namespace hearth::inference
