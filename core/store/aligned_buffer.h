// AlignedBuffer: a heap buffer aligned to 4096 bytes, as O_DIRECT and libaio need. The store also
// uses it as the private buffer of one I/O attempt (a read retry never shares the caller's buffer,
// a write retry re-sends the saved copy), held by shared_ptr so a late completion still owns it.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>

namespace kvchaos::store {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 4096;

  explicit AlignedBuffer(size_t size) : size_(size) {
    const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
    if (p == nullptr) throw std::bad_alloc();
    data_.reset(static_cast<std::byte*>(p));
  }

  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::span<std::byte> span() { return {data_.get(), size_}; }

  static bool IsAligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlignment == 0; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  size_t size_;
  std::unique_ptr<std::byte, Free> data_;
};

}  // namespace kvchaos::store
