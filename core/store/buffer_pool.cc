// BufferPool: get, return and bound the idle buffers (see buffer_pool.h).
#include "core/store/buffer_pool.h"

namespace kvchaos::store {

std::shared_ptr<AlignedBuffer> BufferPool::Get(size_t size) {
  std::unique_ptr<AlignedBuffer> buffer;
  {
    MutexLock lock(mu_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if ((*it)->size() == size) {
        buffer = std::move(*it);
        free_.erase(it);
        break;
      }
    }
  }
  if (!buffer) buffer = std::make_unique<AlignedBuffer>(size);
  std::weak_ptr<BufferPool> pool = weak_from_this();
  return std::shared_ptr<AlignedBuffer>(buffer.release(), [pool](AlignedBuffer* b) {
    std::unique_ptr<AlignedBuffer> owned(b);
    if (auto p = pool.lock()) p->Put(std::move(owned));
  });
}

void BufferPool::Put(std::unique_ptr<AlignedBuffer> buffer) {
  MutexLock lock(mu_);
  if (free_.size() < max_free_) free_.push_back(std::move(buffer));
}

size_t BufferPool::idle() {
  MutexLock lock(mu_);
  return free_.size();
}

}  // namespace kvchaos::store
