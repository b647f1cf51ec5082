// BufferPool: reuses the store's private attempt buffers — a read attempt's own buffer and a
// write's saved copy, which per-attempt timeouts require (transfer.h) — so that a transfer does not
// map, fault in and zero a fresh shard-sized buffer for every attempt. A buffer returns to the pool
// only when its last holder lets go: the transfer, or a late completion through
// IoRequest::keepalive, so a buffer the kernel may still write is never handed out again. The pool
// keeps at most `max_free` idle buffers; a buffer outliving the pool is simply freed.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/common/runtime.h"
#include "core/store/aligned_buffer.h"

namespace kvchaos::store {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  static std::shared_ptr<BufferPool> Create(Runtime& runtime, size_t max_free) {
    return std::shared_ptr<BufferPool>(new BufferPool(runtime, max_free));
  }

  // A 4096-aligned buffer of `size` bytes; its contents are whatever its last user left.
  std::shared_ptr<AlignedBuffer> Get(size_t size) EXCLUDES(mu_);

  size_t idle() EXCLUDES(mu_);

 private:
  BufferPool(Runtime& runtime, size_t max_free) : max_free_(max_free), mu_(runtime) {}
  void Put(std::unique_ptr<AlignedBuffer> buffer) EXCLUDES(mu_);

  const size_t max_free_;
  Mutex mu_;
  std::vector<std::unique_ptr<AlignedBuffer>> free_ GUARDED_BY(mu_);
};

}  // namespace kvchaos::store
