// The aio engine's own promises, through the PosixStore on real files: a direct write reserves its
// block file's full size before the I/O (so ext4 need not complete it inside io_submit), works on
// filesystems without fallocate and fails over when the reservation fails; a hung open holds one
// slot of the queue, not the queue; an open hung past the attempt deadline fails over and its
// submitter thread is replaced, then leaves once the open returns; queueing is not counted against
// the attempt timeout; the kernel never holds more I/Os than the concurrency. Also, for both
// engines: business I/O uses O_DIRECT exactly when io_direct.
#include <fcntl.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/forwarding_aio_ops.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using namespace std::chrono_literals;
using testing::BlockData;
using testing::Backends;
using testing::Eventually;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::IdWithPrimary;
using testing::Op;
using testing::ThreadsNamed;

Status RunTask(Store& store, bool dump, TransferTask task) {
  Result<TaskHandle> h = dump ? store.Dump(std::move(task)) : store.Load(std::move(task));
  if (!h.ok()) return h.status();
  return store.Wait(*h);
}

TEST(AioEngineTest, DirectWriteReservesTheWholeBlockFileBeforeItsIo) {
  Backends backends(1, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  const PosixStoreConfig cfg = backends.Config(IoEngineKind::kAio);
  ASSERT_TRUE(cfg.io_direct);
  ASSERT_TRUE(store.Setup(cfg).ok());
  BlockData block(testing::MakeId(7), 7);
  // The first shard only: the block is not committed yet, but its temp file has its final size.
  ASSERT_TRUE(RunTask(store, true, TransferTask{{block.ShardAt(0)}}).ok());
  EXPECT_EQ(ops.fallocate_lengths(), std::vector<off_t>{static_cast<off_t>(cfg.block_size)})
      << "a direct write must reserve the block file's full size (block_size) once per shard attempt";
  EXPECT_EQ(std::filesystem::file_size(BlockTmpPath(backends[0], block.id)), cfg.block_size);
  EXPECT_FALSE(std::filesystem::exists(BlockPath(backends[0], block.id))) << "committed before its last shard";
  ASSERT_TRUE(RunTask(store, true, TransferTask{{block.ShardAt(1)}}).ok());
  EXPECT_EQ(std::filesystem::file_size(BlockPath(backends[0], block.id)), cfg.block_size);
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(RunTask(store, false, loaded.All()).ok());
  EXPECT_TRUE(loaded.Equals(block)) << "the block read back differs from the one written";
}

TEST(AioEngineTest, FilesystemWithoutFallocateStillStoresTheBlock) {
  Backends backends(1, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio)).ok());
  ops.Add(FaultRule{.op = Op::kFallocate, .prefix = backends[0] + "/", .err = EOPNOTSUPP});
  BlockData block(testing::MakeId(8), 8);
  ASSERT_TRUE(RunTask(store, true, block.All()).ok()) << "EOPNOTSUPP from fallocate must fall back to plain writes";
  EXPECT_GE(ops.Count(Op::kFallocate, backends[0] + "/"), 1) << "the test did not exercise fallocate";
  EXPECT_EQ(store.backends().window(0).failures(), 0) << "an unsupported fallocate is not a backend failure";
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(RunTask(store, false, loaded.All()).ok());
  EXPECT_TRUE(loaded.Equals(block));
}

TEST(AioEngineTest, FailedReservationFailsOverAndNamesFallocate) {
  Backends backends(2, true);  // two access paths to one data directory
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio)).ok());
  ops.Add(FaultRule{.op = Op::kFallocate, .prefix = backends[0] + "/", .err = ENOSPC});
  BlockData block(IdWithPrimary(0, 2), 9);
  ASSERT_TRUE(RunTask(store, true, block.All()).ok()) << "a failed fallocate on the primary must be retried on the next path";
  EXPECT_GE(store.backends().window(0).failures(), 1) << "a failed fallocate is a failure sample for its path";
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(RunTask(store, false, loaded.All()).ok());
  EXPECT_TRUE(loaded.Equals(block));

  ops.Add(FaultRule{.op = Op::kFallocate, .prefix = backends[1] + "/", .err = ENOSPC});
  BlockData other(IdWithPrimary(1, 2), 10);
  const Status s = RunTask(store, true, other.All());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("fallocate("), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(backends[1]), std::string::npos) << s.ToString();
}

// Timeouts off: a hung open can only end when it returns. It must hold its own slot only.
TEST(AioEngineTest, HungOpenHoldsOneSlotNotTheQueue) {
  Backends backends(2, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio)).ok());
  const int opens_before = ops.Count(Op::kOpen, backends[0] + "/");
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[0] + "/", .hang = true, .times = 1});
  BlockData stuck(IdWithPrimary(0, 2), 11);
  Result<TaskHandle> stuck_handle = store.Dump(stuck.All());
  ASSERT_TRUE(stuck_handle.ok());
  ASSERT_TRUE(Eventually([&] { return ops.Count(Op::kOpen, backends[0] + "/") > opens_before; }))
      << "the open on /p0 never started";

  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::thread other([&] {
    for (int i = 0; i < 8; ++i) {
      BlockData block(IdWithPrimary(1, 2, 1000 * (i + 1)), 100 + i);
      if (!RunTask(store, true, block.All()).ok()) ++failures;
    }
    done = true;
  });
  const bool finished = Eventually([&] { return done.load(); });
  ops.Release();  // before any assertion can return, so the thread and the store can end
  other.join();
  EXPECT_TRUE(finished) << "dumps to /p1 waited behind one hung open on /p0: opens serialise the aio queue";
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(store.Wait(*stuck_handle).ok()) << "the hung open, once released, must complete its dump";
}

// The attempt deadline runs from when a submitter picks the attempt up, so it covers the open.
TEST(AioEngineTest, OpenHungPastTheDeadlineFailsOverAndItsSubmitterIsReplaced) {
  Backends backends(2, true);  // two access paths to one data directory
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  const PosixStoreConfig cfg = backends.Config(IoEngineKind::kAio, 100);  // 50 ms per attempt
  ASSERT_TRUE(store.Setup(cfg).ok());
  ASSERT_TRUE(Eventually([&] { return ThreadsNamed("ucm_aio_sub") == cfg.concurrency; }))
      << "want one ucm_aio_sub per unit of concurrency (" << cfg.concurrency << "), have " << ThreadsNamed("ucm_aio_sub");
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[0] + "/", .hang = true, .times = 1});
  BlockData block(IdWithPrimary(0, 2), 12);
  Status dumped;
  std::atomic<bool> done{false};
  std::thread dumper([&] {
    dumped = RunTask(store, true, block.All());
    done = true;
  });
  const bool in_time = Eventually([&] { return done.load(); });
  const bool replaced = Eventually([&] { return ThreadsNamed("ucm_aio_sub") == cfg.concurrency + 1; });
  const int hung = ops.Count(Op::kOpen, backends[0] + "/");
  bool more_ok = in_time;
  for (int i = 0; in_time && i < 2 * cfg.concurrency; ++i) {
    BlockData more(IdWithPrimary(1, 2, 1000 * (i + 1)), 200 + i);
    more_ok = more_ok && RunTask(store, true, more.All()).ok();
  }
  const int submitters_while_stuck = ThreadsNamed("ucm_aio_sub");
  ops.Release();  // before any assertion can return, so the dump and the store can end
  dumper.join();
  ASSERT_TRUE(in_time) << "the dump waited for the hung open: the attempt deadline did not cover the open";
  ASSERT_TRUE(dumped.ok()) << "an open hung past the attempt deadline must fail over: " << dumped.ToString();
  EXPECT_GE(hung, 1);
  EXPECT_TRUE(replaced) << "the submitter stuck in the open must be replaced";
  EXPECT_EQ(submitters_while_stuck, cfg.concurrency + 1) << "the stuck submitter must be replaced once, not per task";
  EXPECT_TRUE(more_ok) << "dumps after the timeout must not wait for the stuck open";
  EXPECT_TRUE(Eventually([&] { return ThreadsNamed("ucm_aio_sub") == cfg.concurrency; }))
      << "the replaced submitter must leave once its open returns";
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(RunTask(store, false, loaded.All()).ok());
  EXPECT_TRUE(loaded.Equals(block));
}

// libaio as is, counting the iocbs the kernel holds (submitted, not yet reaped).
class CountingAioOps final : public testing::ForwardingAioOps {
 public:
  int Submit(io_context_t ctx, long count, struct iocb** iocbs) override {
    // Counted before the call: a completion may be reaped before io_submit returns.
    const int now = in_kernel_.fetch_add(static_cast<int>(count)) + static_cast<int>(count);
    for (int seen = max_.load(); now > seen && !max_.compare_exchange_weak(seen, now);) {
    }
    const int r = ForwardingAioOps::Submit(ctx, count, iocbs);
    in_kernel_.fetch_sub(static_cast<int>(count) - std::max(r, 0));
    return r;
  }
  int GetEvents(io_context_t ctx, long min_nr, long max_nr, struct io_event* events, struct timespec* timeout) override {
    const int r = ForwardingAioOps::GetEvents(ctx, min_nr, max_nr, events, timeout);
    if (r > 0) in_kernel_.fetch_sub(r);
    return r;
  }
  int max_in_kernel() const { return max_.load(); }

 private:
  std::atomic<int> in_kernel_{0};
  std::atomic<int> max_{0};
};

// The queue depth is the concurrency, as fio's iodepth: never more I/Os in the kernel than that,
// even though preparers open files ahead of it.
TEST(AioEngineTest, KernelQueueDepthNeverExceedsConcurrency) {
  Backends backends(1, false);
  CountingAioOps aio;
  PosixStore store(PosixStoreDeps{.aio_ops = &aio});
  const PosixStoreConfig cfg = backends.Config(IoEngineKind::kAio);
  ASSERT_TRUE(store.Setup(cfg).ok());
  std::vector<std::unique_ptr<BlockData>> blocks;
  std::vector<TaskHandle> handles;
  for (int i = 0; i < 64; ++i) {
    blocks.push_back(std::make_unique<BlockData>(testing::MakeId(400 + i), 400 + i));
    Result<TaskHandle> h = store.Dump(blocks.back()->All());
    ASSERT_TRUE(h.ok());
    handles.push_back(*h);
  }
  for (TaskHandle h : handles) ASSERT_TRUE(store.Wait(h).ok());
  EXPECT_LE(aio.max_in_kernel(), cfg.concurrency) << "more I/Os in the kernel than the configured concurrency";
  EXPECT_GE(aio.max_in_kernel(), 1);
  for (auto& b : blocks) {
    BlockData loaded(b->id, 0);
    ASSERT_TRUE(RunTask(store, false, loaded.All()).ok());
    EXPECT_TRUE(loaded.Equals(*b));
  }
  EXPECT_LE(aio.max_in_kernel(), cfg.concurrency);
}

// aio's deadline runs from when a submitter picks the attempt up, not from Submit: with one
// submitter, ten reads whose opens take 40 ms each queue for 400 ms in total, far past the 250 ms
// attempt timeout, yet none of them may time out.
TEST(AioEngineTest, QueueingIsNotCountedAgainstTheAttemptTimeout) {
  Backends backends(2, true);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kAio, /*timeout_ms=*/500);
  cfg.concurrency = 1;
  ASSERT_TRUE(store.Setup(cfg).ok());
  BlockData block(IdWithPrimary(0, 2), 13);
  ASSERT_TRUE(RunTask(store, true, block.All()).ok());
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[0] + "/", .delay = 40ms});
  std::vector<std::unique_ptr<BlockData>> reads;
  TransferTask task;
  for (int i = 0; i < 10; ++i) {
    reads.push_back(std::make_unique<BlockData>(block.id, 300 + i));
    task.shards.push_back(reads.back()->ShardAt(i % 2));
  }
  const Status s = RunTask(store, false, std::move(task));
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(store.backends().window(0).failures(), 0) << "time spent queued was counted as an attempt timeout";
  EXPECT_EQ(ops.Count(Op::kOpen, backends[1] + "/"), 1) << "no read should have been retried on the second path";
}

// Business I/O follows io_direct on both engines: O_DIRECT on every block file open when it is on,
// never when it is off (buffered aio included), and the data round-trips either way.
class DirectIoTest : public ::testing::TestWithParam<std::tuple<IoEngineKind, bool>> {};

TEST_P(DirectIoTest, BlockFilesAreOpenedWithODirectExactlyWhenConfigured) {
  const auto [engine, direct] = GetParam();
  Backends backends(1, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(engine);
  cfg.io_direct = direct;
  ASSERT_TRUE(store.Setup(cfg).ok());
  BlockData block(testing::MakeId(21), 21);
  ASSERT_TRUE(RunTask(store, true, block.All()).ok());
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(RunTask(store, false, loaded.All()).ok());
  EXPECT_TRUE(loaded.Equals(block));
  const std::vector<int> flags = ops.open_flags(BlockPath(backends[0], block.id));  // and its .tmp
  // 2 shard writes and 2 shard reads, plus the write opens that found no directory yet (1 or 2).
  ASSERT_GE(flags.size(), 5u) << "the block's files were not opened through FileOps";
  for (int f : flags) EXPECT_EQ((f & O_DIRECT) != 0, direct) << "open flags " << std::hex << f;
}

INSTANTIATE_TEST_SUITE_P(EnginesAndModes, DirectIoTest,
                         ::testing::Combine(::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio), ::testing::Bool()),
                         [](const auto& p) {
                           return std::string(std::get<0>(p.param) == IoEngineKind::kAio ? "aio" : "psync") +
                                  (std::get<1>(p.param) ? "_direct" : "_buffered");
                         });

}  // namespace
}  // namespace kvchaos::store
