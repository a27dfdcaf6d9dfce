// The GGUF validating parser. Layout (little-endian):
//   "GGUF" u32 version  u64 n_tensors  u64 n_kv
//   n_kv x     { string key, u32 value_type, value }
//   n_tensors x{ string name, u32 n_dims, i64 ne[n_dims], u32 tensor_type, u64 offset }
//   padding to general.alignment, then the tensor data section.
// A string is u64 length + bytes (no NUL); an array is u32 element type + u64 count + elements.
// Every number read from the file is untrusted: each read checks the bytes that remain first,
// every product and sum is overflow-checked, and no allocation is sized by a count before the
// count has been bounded by what the remaining bytes could hold. Errors are thrown as
// parse_error inside this file and turned into a result at parse_gguf().
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>

#include "inference/gguf/gguf_file_impl.h"

namespace hearth::inference::gguf {
namespace {

constexpr uint64_t k_header_bytes = 24;            // magic, version, n_tensors, n_kv
constexpr uint64_t k_min_kv_bytes = 8 + 4 + 1;      // empty key length, type, smallest value
constexpr uint64_t k_min_tensor_info_bytes = 8 + 4 + 8 + 4 + 8;  // name length, n_dims, one ne, type, offset
constexpr uint64_t k_max_key_bytes = 65535;
constexpr uint64_t k_max_tensor_name_bytes = 63;    // ggml's GGML_MAX_NAME is 64 including the NUL
constexpr uint32_t k_max_dims = 4;
constexpr uint64_t k_default_alignment = 32;
constexpr uint64_t k_max_alignment = uint64_t{1} << 20;

struct parse_error {
    std::string message;
};

template <class... Parts>
[[noreturn]] void bad(uint64_t offset, Parts &&... parts) {
    throw parse_error{fail("at offset ", offset, ": ", std::forward<Parts>(parts)...).message};
}

// Bytes of one element of a fixed-size value type; 0 for string and array.
uint64_t scalar_size(value_type t) {
    switch (t) {
        case value_type::u8: case value_type::i8: case value_type::boolean: return 1;
        case value_type::u16: case value_type::i16: return 2;
        case value_type::u32: case value_type::i32: case value_type::f32: return 4;
        case value_type::u64: case value_type::i64: case value_type::f64: return 8;
        case value_type::string: case value_type::array: return 0;
    }
    return 0;
}

bool is_value_type(uint32_t raw) { return raw <= static_cast<uint32_t>(value_type::f64); }

// x rounded up to a multiple of `align` (a power of two); false if that wraps.
bool align_up(uint64_t x, uint64_t align, uint64_t & out) {
    uint64_t sum = 0;
    if (__builtin_add_overflow(x, align - 1, &sum)) return false;
    out = sum & ~(align - 1);
    return true;
}

class reader {
public:
    explicit reader(std::span<const uint8_t> b) : b_(b) {}

    uint64_t pos() const { return pos_; }
    uint64_t remaining() const { return b_.size() - pos_; }

    void need(uint64_t n, std::string_view what) const {
        if (n > remaining())
            bad(pos_, "truncated file: ", what, " needs ", n, " bytes but only ", remaining(),
                " remain (file is ", b_.size(), " bytes)");
    }

    const uint8_t * take(uint64_t n, std::string_view what) {
        need(n, what);
        const uint8_t * p = b_.data() + pos_;
        pos_ += n;
        return p;
    }

    template <class T>
    T read(std::string_view what) {
        T v;
        std::memcpy(&v, take(sizeof(T), what), sizeof(T));
        return v;
    }

    std::string_view read_string(std::string_view what, uint64_t max_len) {
        const uint64_t at = pos_;
        const uint64_t len = read<uint64_t>(what);
        if (len > remaining())
            bad(at, what, ": length ", len, " runs past the end of the file (", remaining(), " bytes remain)");
        if (len > max_len) bad(at, what, ": length ", len, " exceeds the limit of ", max_len, " bytes");
        const uint8_t * p = take(len, what);
        return {reinterpret_cast<const char *>(p), static_cast<size_t>(len)};
    }

private:
    std::span<const uint8_t> b_;
    uint64_t pos_ = 0;
};

std::string quoted(std::string_view s) {
    std::string out = "'";
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            static const char * hex = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return out + "'";
}

void read_scalar(reader & r, value_type t, metadata_value & v, std::string_view what) {
    switch (t) {
        case value_type::u8: v.u = r.read<uint8_t>(what); v.i = static_cast<int64_t>(v.u); break;
        case value_type::u16: v.u = r.read<uint16_t>(what); v.i = static_cast<int64_t>(v.u); break;
        case value_type::u32: v.u = r.read<uint32_t>(what); v.i = static_cast<int64_t>(v.u); break;
        case value_type::u64:
            v.u = r.read<uint64_t>(what);
            v.i = v.u <= static_cast<uint64_t>(INT64_MAX) ? static_cast<int64_t>(v.u) : 0;
            break;
        case value_type::i8: v.i = r.read<int8_t>(what); break;
        case value_type::i16: v.i = r.read<int16_t>(what); break;
        case value_type::i32: v.i = r.read<int32_t>(what); break;
        case value_type::i64: v.i = r.read<int64_t>(what); break;
        case value_type::boolean: {
            const uint64_t at = r.pos();
            const uint8_t b = r.read<uint8_t>(what);
            if (b > 1) bad(at, what, ": bool value ", b, ", expected 0 or 1");
            v.u = b;
            v.i = b;
            break;
        }
        case value_type::f32: v.f = r.read<float>(what); break;
        case value_type::f64: v.f = r.read<double>(what); break;
        case value_type::string: case value_type::array: break;
    }
    if (t == value_type::i8 || t == value_type::i16 || t == value_type::i32 || t == value_type::i64)
        v.u = v.i >= 0 ? static_cast<uint64_t>(v.i) : 0;
}

void read_array(reader & r, metadata_value & v, const std::string & what) {
    const uint64_t type_at = r.pos();
    const uint32_t raw = r.read<uint32_t>(what + " element type");
    if (!is_value_type(raw)) bad(type_at, what, ": unknown array element type ", raw, ", expected 0..12");
    v.elem_type = static_cast<value_type>(raw);
    if (v.elem_type == value_type::array) bad(type_at, what, ": arrays of arrays are not supported");
    const uint64_t count_at = r.pos();
    v.count = r.read<uint64_t>(what + " count");
    if (v.elem_type == value_type::string) {
        const uint64_t max = r.remaining() / 8;  // each string costs at least its 8-byte length
        if (v.count > max)
            bad(count_at, what, ": ", v.count, " strings cannot fit in the ", r.remaining(),
                " bytes that remain (at most ", max, ")");
        v.strs.reserve(static_cast<size_t>(v.count));
        for (uint64_t j = 0; j < v.count; ++j) v.strs.push_back(r.read_string(what + " element", r.remaining()));
        return;
    }
    const uint64_t esize = scalar_size(v.elem_type);
    uint64_t n_bytes = 0;
    if (__builtin_mul_overflow(v.count, esize, &n_bytes))
        bad(count_at, what, ": ", v.count, " elements of ", esize, " bytes overflow 64 bits");
    if (n_bytes > r.remaining())
        bad(count_at, what, ": ", v.count, " ", value_type_name(v.elem_type), " elements (", n_bytes,
            " bytes) run past the end of the file (", r.remaining(), " bytes remain)");
    v.data = r.take(n_bytes, what);
    if (v.elem_type == value_type::boolean) {
        for (uint64_t j = 0; j < v.count; ++j)
            if (v.data[j] > 1) bad(count_at + 8 + j, what, ": bool element ", j, " is ", v.data[j], ", expected 0 or 1");
    }
}

// Keys whose type llama.cpp relies on: a file that stores them with another type is refused
// here rather than misread later.
struct known_key {
    std::string_view key;
    value_type type;
    value_type elem_type;  // for arrays
};
constexpr known_key k_known_keys[] = {
    {"general.alignment", value_type::u32, value_type::u8},
    {"general.architecture", value_type::string, value_type::u8},
    {"tokenizer.ggml.model", value_type::string, value_type::u8},
    {"tokenizer.ggml.tokens", value_type::array, value_type::string},
    {"tokenizer.ggml.scores", value_type::array, value_type::f32},
    {"tokenizer.ggml.token_type", value_type::array, value_type::i32},
    {"tokenizer.ggml.merges", value_type::array, value_type::string},
};

void check_known_keys(const gguf_file::impl & f, const std::vector<uint64_t> & key_offsets) {
    for (const auto & k : k_known_keys) {
        const auto it = f.metadata_index.find(k.key);
        if (it == f.metadata_index.end()) continue;
        const metadata_value & v = f.metadata[it->second].value;
        if (v.type != k.type || (k.type == value_type::array && v.elem_type != k.elem_type))
            bad(key_offsets[it->second], "metadata '", k.key, "' has type ", type_text(v.type, v.elem_type),
                ", expected ", type_text(k.type, k.elem_type));
    }
    // Per-token arrays must line up with the token list.
    const auto tokens = f.metadata_index.find("tokenizer.ggml.tokens");
    if (tokens == f.metadata_index.end()) return;
    const uint64_t n_tokens = f.metadata[tokens->second].value.count;
    for (const std::string_view key : {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
        const auto it = f.metadata_index.find(key);
        if (it != f.metadata_index.end() && f.metadata[it->second].value.count != n_tokens)
            bad(key_offsets[it->second], "metadata '", key, "' has ", f.metadata[it->second].value.count,
                " elements, expected one per token (", n_tokens, ")");
    }
}

void read_metadata(reader & r, gguf_file::impl & f, uint64_t n_kv, std::vector<uint64_t> & key_offsets) {
    f.metadata.reserve(static_cast<size_t>(n_kv));  // bounded by the caller against the remaining bytes
    key_offsets.reserve(static_cast<size_t>(n_kv));
    for (uint64_t i = 0; i < n_kv; ++i) {
        const uint64_t at = r.pos();
        const std::string entry = "metadata entry " + std::to_string(i);
        metadata_entry e;
        e.key = r.read_string(entry + " key", k_max_key_bytes);
        if (e.key.empty()) bad(at, entry, ": empty key");
        const std::string what = "metadata " + quoted(e.key);
        const uint64_t type_at = r.pos();
        const uint32_t raw = r.read<uint32_t>(what + " value type");
        if (!is_value_type(raw)) bad(type_at, what, ": unknown value type ", raw, ", expected 0..12");
        e.value.type = static_cast<value_type>(raw);
        if (e.value.type == value_type::string)
            e.value.str = r.read_string(what, r.remaining());
        else if (e.value.type == value_type::array)
            read_array(r, e.value, what);
        else
            read_scalar(r, e.value.type, e.value, what);
        if (!f.metadata_index.emplace(e.key, f.metadata.size()).second)
            bad(at, "duplicate metadata key ", quoted(e.key));
        f.metadata.push_back(std::move(e));
        key_offsets.push_back(at);
    }
}

void read_alignment(gguf_file::impl & f, const std::vector<uint64_t> & key_offsets) {
    const auto it = f.metadata_index.find("general.alignment");
    if (it == f.metadata_index.end()) return;
    const uint64_t a = f.metadata[it->second].value.u;  // type checked as u32 already
    if (a == 0 || (a & (a - 1)) != 0 || a > k_max_alignment)
        bad(key_offsets[it->second], "general.alignment is ", a, ", expected a power of two from 1 to ", k_max_alignment);
    f.alignment = a;
}

void read_tensor_infos(reader & r, gguf_file::impl & f, uint64_t n_tensors, std::vector<uint64_t> & info_offsets) {
    f.tensors.reserve(static_cast<size_t>(n_tensors));  // bounded by the caller
    info_offsets.reserve(static_cast<size_t>(n_tensors));
    for (uint64_t i = 0; i < n_tensors; ++i) {
        const uint64_t at = r.pos();
        tensor_info t;
        t.name = r.read_string("name of tensor " + std::to_string(i), k_max_tensor_name_bytes);
        if (t.name.empty()) bad(at, "tensor ", i, " has an empty name");
        const std::string what = "tensor " + quoted(t.name);
        const uint64_t dims_at = r.pos();
        t.n_dims = r.read<uint32_t>(what + " n_dims");
        if (t.n_dims == 0 || t.n_dims > k_max_dims)
            bad(dims_at, what, ": n_dims ", t.n_dims, ", expected 1..", k_max_dims);
        int64_t n_elements = 1;
        for (uint32_t d = 0; d < t.n_dims; ++d) {
            const uint64_t ne_at = r.pos();
            t.ne[d] = r.read<int64_t>(what + " dimension");
            if (t.ne[d] <= 0) bad(ne_at, what, ": dimension ", d, " is ", t.ne[d], ", expected > 0");
            if (__builtin_mul_overflow(n_elements, t.ne[d], &n_elements))
                bad(ne_at, what, ": element count overflows 64 bits at dimension ", d);
        }
        const uint64_t type_at = r.pos();
        const uint32_t raw_type = r.read<uint32_t>(what + " type");
        const auto & traits = kernels::tensor_type_info(raw_type);
        if (!traits.known) bad(type_at, what, ": unknown or removed tensor type id ", raw_type);
        t.type = static_cast<kernels::tensor_type>(raw_type);
        if (t.ne[0] % traits.block_size != 0)
            bad(dims_at, what, ": row length ne[0] = ", t.ne[0], " is not a multiple of ", traits.name,
                "'s block size ", traits.block_size);
        uint64_t row = 0;
        const uint64_t n_rows = static_cast<uint64_t>(n_elements / t.ne[0]);
        if (__builtin_mul_overflow(static_cast<uint64_t>(t.ne[0] / traits.block_size), traits.type_size, &row) ||
            __builtin_mul_overflow(row, n_rows, &t.size_bytes))
            bad(dims_at, what, ": byte size overflows 64 bits");
        t.offset = r.read<uint64_t>(what + " data offset");
        if (!f.tensor_index.emplace(t.name, f.tensors.size()).second) bad(at, "duplicate tensor name ", quoted(t.name));
        f.tensors.push_back(t);
        info_offsets.push_back(at);
    }
}

// Tensors, taken in the order of their offsets, must tile the data section: each starts
// at the aligned end of the one before (as ggml writes them), so none overlap and no
// offset points anywhere we did not expect. All of it is arithmetic on the header;
// no tensor byte is read.
void place_tensors(gguf_file::impl & f, const std::vector<uint64_t> & info_offsets) {
    const uint64_t file_size = f.bytes.size();
    if (f.tensors.empty()) return;
    if (f.data_offset > file_size)
        bad(f.data_offset, "tensor data section starts past the end of the file (", file_size, " bytes)");
    std::vector<size_t> order(f.tensors.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return f.tensors[a].offset < f.tensors[b].offset; });
    uint64_t expected = 0;
    const tensor_info * prev = nullptr;
    for (const size_t idx : order) {
        tensor_info & t = f.tensors[idx];
        const uint64_t at = info_offsets[idx];
        const std::string what = "tensor " + quoted(t.name);
        if (t.offset < expected)
            bad(at, what, ": data offset ", t.offset, " overlaps tensor ", quoted(prev->name), " (which ends at ",
                prev->offset + prev->size_bytes, "); expected offset ", expected);
        if (t.offset > expected)
            bad(at, what, ": data offset ", t.offset, " leaves a gap; expected ", expected,
                " (the aligned end of the tensor before it)");
        uint64_t start = 0, end = 0;
        if (__builtin_add_overflow(f.data_offset, t.offset, &start) || __builtin_add_overflow(start, t.size_bytes, &end))
            bad(at, what, ": data range overflows 64 bits");
        if (end > file_size)
            bad(at, what, ": data [", start, ", ", end, ") runs past the end of the file (", file_size, " bytes)");
        t.data = f.bytes.data() + start;
        f.tensor_data_bytes += t.size_bytes;
        if (!align_up(t.offset + t.size_bytes, f.alignment, expected))
            bad(at, what, ": padded end of data overflows 64 bits");
        prev = &t;
    }
}

void parse(reader & r, gguf_file::impl & f) {
    const uint64_t size = f.bytes.size();
    if (size < 4 || std::memcmp(f.bytes.data(), "GGUF", 4) != 0)
        bad(0, "not a GGUF file: bad magic (expected the bytes 'GGUF')");
    if (size < k_header_bytes) bad(0, "truncated file: ", size, " bytes, the GGUF header alone is ", k_header_bytes);
    r.take(4, "magic");
    f.version = r.read<uint32_t>("version");
    if (f.version == 1) bad(4, "GGUF version 1 is not supported, expected version 2 or 3");
    if (f.version != 2 && f.version != 3) {
        if ((f.version & 0xffff) == 0 && (__builtin_bswap32(f.version) == 2 || __builtin_bswap32(f.version) == 3))
            bad(4, "big-endian GGUF file (version reads as ", f.version, "); only little-endian files are supported");
        bad(4, "unsupported GGUF version ", f.version, ", expected 2 or 3");
    }
    const uint64_t n_tensors = r.read<uint64_t>("tensor count");
    const uint64_t n_kv = r.read<uint64_t>("metadata count");
    // Bound both counts by the bytes that remain before anything is sized by them.
    if (n_kv > r.remaining() / k_min_kv_bytes)
        bad(16, "metadata count ", n_kv, " exceeds what the remaining ", r.remaining(), " bytes could hold (at most ",
            r.remaining() / k_min_kv_bytes, ")");
    if (n_tensors > r.remaining() / k_min_tensor_info_bytes)
        bad(8, "tensor count ", n_tensors, " exceeds what the remaining ", r.remaining(), " bytes could hold (at most ",
            r.remaining() / k_min_tensor_info_bytes, ")");

    std::vector<uint64_t> key_offsets;
    read_metadata(r, f, n_kv, key_offsets);
    check_known_keys(f, key_offsets);
    read_alignment(f, key_offsets);

    if (n_tensors > r.remaining() / k_min_tensor_info_bytes)
        bad(8, "tensor count ", n_tensors, " exceeds what the ", r.remaining(),
            " bytes after the metadata could hold (at most ", r.remaining() / k_min_tensor_info_bytes, ")");
    std::vector<uint64_t> info_offsets;
    read_tensor_infos(r, f, n_tensors, info_offsets);
    if (!align_up(r.pos(), f.alignment, f.data_offset)) bad(r.pos(), "data section offset overflows 64 bits");
    place_tensors(f, info_offsets);
}

}  // namespace

result<std::unique_ptr<gguf_file::impl>> parse_gguf(std::span<const uint8_t> bytes) {
    auto f = std::make_unique<gguf_file::impl>();
    f->bytes = bytes;
    f->alignment = k_default_alignment;
    reader r(bytes);
    try {
        parse(r, *f);
    } catch (const parse_error & e) {
        return error{e.message};
    } catch (const std::bad_alloc &) {
        return fail("at offset ", r.pos(), ": out of memory while reading the header");
    }
    return f;
}

}  // namespace hearth::inference::gguf
