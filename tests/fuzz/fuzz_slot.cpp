// fuzz-links: hearth_inference
// Feeds arbitrary bytes to the KV slot-file reader as the file it opened: a memfd holding
// exactly those bytes (a regular file, as load() requires). A bad file must be refused with
// an error and leave the sequence as it was; nothing may crash, hang, trip a sanitizer or
// allocate more than one slot of this small cache, whatever sizes or counts the header
// claims. An accepted file must leave the sequence consistent: one token per position, no
// more positions than were asked for.
// Seeds (corpus/slot/): files slot_store::save wrote for this target's cache shape, model
// identity and key, holding 0, 1, 5 and 64 positions, and a few cut or altered copies.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include "inference/session/slot_store.h"

namespace {

using namespace hearth::inference;

constexpr int32_t k_n_layer = 2, k_n_embd_kv = 8, k_n_ctx = 64;
const std::string k_key = "file:///fuzz.txt";

model_identity fuzz_model() {
    model_identity id;
    for (size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<uint8_t>(0x11 * (i + 1));
    return id;
}

volatile uint64_t g_sink;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    static const int fd = ::memfd_create("hearth-fuzz-slot", MFD_CLOEXEC);
    if (fd < 0) std::abort();
    if (::ftruncate(fd, 0) != 0) std::abort();
    for (size_t off = 0; off < size;) {
        const ssize_t w = ::pwrite(fd, data + off, size - off, static_cast<off_t>(off));
        if (w <= 0) std::abort();
        off += static_cast<size_t>(w);
    }
    sequence seq(kv_cache(hearth::kernels::tensor_type::f32, k_n_layer, k_n_embd_kv, k_n_ctx));
    seq.cache.reserve(3);
    seq.cache.set_n_pos(3);
    seq.tokens = {7, 8, 9};
    seq.n_batch_rows = 3;
    const int32_t max_positions = static_cast<int32_t>(size % (k_n_ctx + 1));
    const auto s = read_slot_file(fd, "fuzz input", k_key, fuzz_model(), seq, max_positions);
    if (!s) {
        if (s.message().empty()) std::abort();
        if (seq.tokens != std::vector<token_id>{7, 8, 9} || seq.cache.n_pos() != 3) std::abort();   // changed though refused
        return 0;
    }
    if (static_cast<size_t>(seq.cache.n_pos()) != seq.tokens.size() || seq.cache.n_pos() > max_positions) std::abort();
    uint64_t h = 0;
    for (int32_t il = 0; il < k_n_layer; ++il)
        for (size_t b = 0; b < static_cast<size_t>(seq.cache.n_pos()) * seq.cache.row_bytes(kv_half::k); ++b)
            h += seq.cache.k_data(il)[b] ^ seq.cache.v_data(il)[b];
    g_sink = h;
    return 0;
}
