// gguf_file: opening (map + parse) and typed access to what the parser validated.
#include "inference/gguf/gguf_file.h"

#include <cstring>

#include "inference/gguf/gguf_file_impl.h"

namespace hearth::inference::gguf {

std::string_view value_type_name(value_type t) {
    switch (t) {
        case value_type::u8: return "u8";
        case value_type::i8: return "i8";
        case value_type::u16: return "u16";
        case value_type::i16: return "i16";
        case value_type::u32: return "u32";
        case value_type::i32: return "i32";
        case value_type::f32: return "f32";
        case value_type::boolean: return "bool";
        case value_type::string: return "string";
        case value_type::array: return "array";
        case value_type::u64: return "u64";
        case value_type::i64: return "i64";
        case value_type::f64: return "f64";
    }
    return "unknown";
}

std::string type_text(value_type t, value_type elem_type) {
    std::string s(value_type_name(t));
    if (t == value_type::array) {
        s += '[';
        s += value_type_name(elem_type);
        s += ']';
    }
    return s;
}

uint64_t tensor_info::row_bytes() const {
    const auto & traits = kernels::tensor_type_info(type);
    return static_cast<uint64_t>(ne[0] / traits.block_size) * traits.type_size;
}

result<gguf_file> gguf_file::open(const std::string & path) {
    auto map = mapped_file::open(path);
    if (!map) return map.error();
    auto parsed = parse_gguf(map->bytes());
    if (!parsed) return fail(path, ": ", parsed.message());
    auto p = std::move(*parsed);
    p->map = std::move(*map);  // moving the mapping keeps its address: views stay valid
    return gguf_file(std::move(p));
}

result<gguf_file> gguf_file::from_memory(std::span<const uint8_t> bytes) {
    auto parsed = parse_gguf(bytes);
    if (!parsed) return parsed.error();
    return gguf_file(std::move(*parsed));
}

gguf_file::gguf_file(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
gguf_file::gguf_file(gguf_file &&) noexcept = default;
gguf_file & gguf_file::operator=(gguf_file &&) noexcept = default;
gguf_file::~gguf_file() = default;

uint32_t gguf_file::version() const { return impl_->version; }
uint64_t gguf_file::file_size() const { return impl_->bytes.size(); }
uint64_t gguf_file::alignment() const { return impl_->alignment; }
uint64_t gguf_file::data_offset() const { return impl_->data_offset; }
uint64_t gguf_file::tensor_data_bytes() const { return impl_->tensor_data_bytes; }

std::span<const metadata_entry> gguf_file::metadata() const { return impl_->metadata; }

const metadata_value * gguf_file::find(std::string_view key) const {
    const auto it = impl_->metadata_index.find(key);
    return it == impl_->metadata_index.end() ? nullptr : &impl_->metadata[it->second].value;
}

std::span<const tensor_info> gguf_file::tensors() const { return impl_->tensors; }

const tensor_info * gguf_file::find_tensor(std::string_view name) const {
    const auto it = impl_->tensor_index.find(name);
    return it == impl_->tensor_index.end() ? nullptr : &impl_->tensors[it->second];
}

namespace {

bool is_unsigned(value_type t) {
    return t == value_type::u8 || t == value_type::u16 || t == value_type::u32 || t == value_type::u64;
}
bool is_signed(value_type t) {
    return t == value_type::i8 || t == value_type::i16 || t == value_type::i32 || t == value_type::i64;
}

error wrong_type(std::string_view key, const metadata_value & v, std::string_view expected) {
    return fail("metadata '", key, "' has type ", type_text(v.type, v.elem_type), ", expected ", expected);
}

// Element j of a fixed-size integer array, widened; false for a u64 above INT64_MAX.
bool int_element(const metadata_value & v, uint64_t j, int64_t & out) {
    const uint8_t * p = v.data;
    switch (v.elem_type) {
        case value_type::u8: out = p[j]; return true;
        case value_type::i8: { int8_t x; std::memcpy(&x, p + j, 1); out = x; return true; }
        case value_type::u16: { uint16_t x; std::memcpy(&x, p + 2 * j, 2); out = x; return true; }
        case value_type::i16: { int16_t x; std::memcpy(&x, p + 2 * j, 2); out = x; return true; }
        case value_type::u32: { uint32_t x; std::memcpy(&x, p + 4 * j, 4); out = x; return true; }
        case value_type::i32: { int32_t x; std::memcpy(&x, p + 4 * j, 4); out = x; return true; }
        case value_type::i64: { std::memcpy(&out, p + 8 * j, 8); return true; }
        case value_type::u64: {
            uint64_t x;
            std::memcpy(&x, p + 8 * j, 8);
            out = static_cast<int64_t>(x);
            return x <= static_cast<uint64_t>(INT64_MAX);
        }
        default: return false;
    }
}

}  // namespace

result<std::optional<uint64_t>> gguf_file::get_uint(std::string_view key) const {
    const metadata_value * v = find(key);
    if (!v) return std::optional<uint64_t>{};
    if (is_unsigned(v->type)) return std::optional<uint64_t>{v->u};
    if (is_signed(v->type)) {
        if (v->i < 0) return fail("metadata '", key, "' is ", v->i, ", expected a non-negative integer");
        return std::optional<uint64_t>{static_cast<uint64_t>(v->i)};
    }
    return wrong_type(key, *v, "an integer");
}

result<std::optional<int64_t>> gguf_file::get_int(std::string_view key) const {
    const metadata_value * v = find(key);
    if (!v) return std::optional<int64_t>{};
    if (is_signed(v->type)) return std::optional<int64_t>{v->i};
    if (is_unsigned(v->type)) {
        if (v->u > static_cast<uint64_t>(INT64_MAX))
            return fail("metadata '", key, "' is ", v->u, ", expected at most ", INT64_MAX);
        return std::optional<int64_t>{static_cast<int64_t>(v->u)};
    }
    return wrong_type(key, *v, "an integer");
}

result<std::optional<double>> gguf_file::get_float(std::string_view key) const {
    const metadata_value * v = find(key);
    if (!v) return std::optional<double>{};
    if (v->type == value_type::f32 || v->type == value_type::f64) return std::optional<double>{v->f};
    return wrong_type(key, *v, "f32 or f64");
}

result<std::optional<bool>> gguf_file::get_bool(std::string_view key) const {
    const metadata_value * v = find(key);
    if (!v) return std::optional<bool>{};
    if (v->type == value_type::boolean) return std::optional<bool>{v->u != 0};
    return wrong_type(key, *v, "bool");
}

result<std::optional<std::string_view>> gguf_file::get_string(std::string_view key) const {
    const metadata_value * v = find(key);
    if (!v) return std::optional<std::string_view>{};
    if (v->type == value_type::string) return std::optional<std::string_view>{v->str};
    return wrong_type(key, *v, "string");
}

result<std::optional<std::span<const std::string_view>>> gguf_file::get_string_array(std::string_view key) const {
    using out = std::optional<std::span<const std::string_view>>;
    const metadata_value * v = find(key);
    if (!v) return out{};
    if (v->type == value_type::array && v->elem_type == value_type::string) return out{std::span(v->strs)};
    return wrong_type(key, *v, "array[string]");
}

result<std::optional<std::vector<float>>> gguf_file::get_f32_array(std::string_view key) const {
    using out = std::optional<std::vector<float>>;
    const metadata_value * v = find(key);
    if (!v) return out{};
    if (v->type != value_type::array || v->elem_type != value_type::f32) return wrong_type(key, *v, "array[f32]");
    std::vector<float> values(static_cast<size_t>(v->count));  // count * 4 bytes were validated to be in the file
    if (v->count) std::memcpy(values.data(), v->data, values.size() * sizeof(float));
    return out{std::move(values)};
}

result<std::optional<std::vector<int64_t>>> gguf_file::get_int_array(std::string_view key) const {
    using out = std::optional<std::vector<int64_t>>;
    const metadata_value * v = find(key);
    if (!v) return out{};
    if (v->type != value_type::array || !(is_signed(v->elem_type) || is_unsigned(v->elem_type)))
        return wrong_type(key, *v, "an array of integers");
    std::vector<int64_t> values(static_cast<size_t>(v->count));
    for (uint64_t j = 0; j < v->count; ++j)
        if (!int_element(*v, j, values[j]))
            return fail("metadata '", key, "' element ", j, " exceeds ", INT64_MAX);
    return out{std::move(values)};
}

}  // namespace hearth::inference::gguf
