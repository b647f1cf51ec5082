// BufferPool: a released buffer is handed out again instead of a fresh one, never while anyone
// (a late completion, say) still holds it, only for the same size, and idle buffers are bounded.
#include "core/store/buffer_pool.h"

#include <gtest/gtest.h>

namespace kvchaos::store {
namespace {

TEST(BufferPoolTest, ReleasedBufferIsReusedAndAHeldOneNever) {
  auto pool = BufferPool::Create(Runtime::Real(), 4);
  std::shared_ptr<AlignedBuffer> a = pool->Get(8192);
  std::byte* const a_data = a->data();
  EXPECT_TRUE(AlignedBuffer::IsAligned(a_data));
  std::shared_ptr<AlignedBuffer> late_holder = a;  // as IoRequest::keepalive of a late completion
  a.reset();
  std::shared_ptr<AlignedBuffer> b = pool->Get(8192);
  EXPECT_NE(b->data(), a_data) << "a buffer still held (a late completion may write it) was handed out again";
  late_holder.reset();
  EXPECT_EQ(pool->idle(), 1u);
  std::shared_ptr<AlignedBuffer> c = pool->Get(8192);
  EXPECT_EQ(c->data(), a_data) << "a released buffer should be reused, not reallocated";
  EXPECT_EQ(pool->idle(), 0u);
}

TEST(BufferPoolTest, OnlyTheSameSizeIsReused) {
  auto pool = BufferPool::Create(Runtime::Real(), 4);
  pool->Get(4096).reset();
  std::shared_ptr<AlignedBuffer> big = pool->Get(16384);
  EXPECT_EQ(big->size(), 16384u);
  EXPECT_EQ(pool->idle(), 1u) << "the 4096-byte buffer must stay idle";
}

TEST(BufferPoolTest, IdleBuffersAreBoundedAndOutlivingThePoolIsSafe) {
  auto pool = BufferPool::Create(Runtime::Real(), 2);
  std::vector<std::shared_ptr<AlignedBuffer>> held;
  for (int i = 0; i < 5; ++i) held.push_back(pool->Get(4096));
  held.clear();
  EXPECT_EQ(pool->idle(), 2u);
  std::shared_ptr<AlignedBuffer> survivor = pool->Get(4096);
  pool.reset();
  survivor.reset();  // the pool is gone: the buffer is simply freed (ASan checks)
}

}  // namespace
}  // namespace kvchaos::store
