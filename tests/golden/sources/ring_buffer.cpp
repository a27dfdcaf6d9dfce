// Fixed-capacity ring buffer for audio samples, single producer / single consumer.
//
// The producer (the capture callback) never blocks and never allocates: when
// the buffer is full, the oldest samples are overwritten and counted as dropped.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace audio {

template <typename T>
class ring_buffer {
public:
    explicit ring_buffer(std::size_t capacity)
        : data_(round_up_pow2(capacity)), mask_(data_.size() - 1) {
        if (capacity == 0) throw std::invalid_argument("ring_buffer: capacity must be > 0");
    }

    // Writes all of `in`; returns how many old samples were overwritten.
    std::size_t push(std::span<const T> in) noexcept {
        const std::size_t head = head_.load(std::memory_order_relaxed);
        for (std::size_t i = 0; i < in.size(); ++i) data_[(head + i) & mask_] = in[i];
        head_.store(head + in.size(), std::memory_order_release);

        const std::size_t tail = tail_.load(std::memory_order_acquire);
        const std::size_t used = head + in.size() - tail;
        if (used <= data_.size()) return 0;
        const std::size_t lost = used - data_.size();
        dropped_.fetch_add(lost, std::memory_order_relaxed);
        return lost;
    }

    // Copies up to out.size() samples into `out`; returns the count copied.
    std::size_t pop(std::span<T> out) noexcept {
        std::size_t tail = tail_.load(std::memory_order_relaxed);
        const std::size_t head = head_.load(std::memory_order_acquire);
        if (head - tail > data_.size()) tail = head - data_.size();  // skip overwritten samples
        const std::size_t n = std::min(out.size(), head - tail);
        for (std::size_t i = 0; i < n; ++i) out[i] = data_[(tail + i) & mask_];
        tail_.store(tail + n, std::memory_order_release);
        return n;
    }

    std::size_t capacity() const noexcept { return data_.size(); }
    std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

private:
    static std::size_t round_up_pow2(std::size_t n) {
        std::size_t p = 1;
        while (p < n) p <<= 1;
        return p;
    }

    std::vector<T> data_;
    std::size_t mask_;
    std::atomic<std::size_t> head_{0};
    std::atomic<std::size_t> tail_{0};
    std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace audio

int main() {
    audio::ring_buffer<float> rb(1000);
    std::vector<float> block(256, 0.5f), out(512);
    for (int i = 0; i < 5; ++i) rb.push(block);
    const std::size_t got = rb.pop(out);
    return got == 512 && rb.dropped() == 256 ? 0 : 1;
}
