// How PosixStore retries and records (issue 18, upstream's catalogue): failures reach the path's
// window from the I/O callback, with nobody waiting on the task; with timeouts off only the shard
// that failed is retried, not the whole task; layer-wise dumps (one task per shard) of a block all
// go to the block's one backend; the psync engine's dispatch queue serves 256 concurrent
// single-shard loads from several producer threads at once.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using testing::Backends;
using testing::BlockData;
using testing::Eventually;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::IdWithPrimary;
using testing::Op;

class StoreRetryRulesTest : public ::testing::TestWithParam<IoEngineKind> {};

TEST_P(StoreRetryRulesTest, FailuresAreRecordedWithoutAnyoneWaitingOnTheTask) {
  Backends backends(3, /*shared=*/false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[1] + "/", .err = EIO});
  BlockData block(IdWithPrimary(1, 3), 1);
  Result<TaskHandle> handle = store.Dump(block.All());
  ASSERT_TRUE(handle.ok());
  // Nobody calls Wait yet: the path must be blamed, and the block land on the next one, anyway.
  EXPECT_TRUE(Eventually([&] { return !store.backends().available(1); }))
      << "failures of a task nobody waits on never reached the window (" << store.backends().window(1).failures()
      << " recorded)";
  EXPECT_TRUE(Eventually([&] { return std::filesystem::exists(BlockPath(backends[2], block.id)); }))
      << "the retry on the next path waited for Wait";
  EXPECT_TRUE(store.Wait(*handle).ok());
}

TEST_P(StoreRetryRulesTest, WithTimeoutsOffOnlyTheFailedShardIsRetried) {
  Backends backends(3, /*shared=*/true);  // paths to one storage: a block split over two still commits
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(GetParam(), /*timeout_ms=*/0)).ok());
  BlockData block(IdWithPrimary(1, 3), 1, /*shards=*/2);
  // The shard directory exists (one storage, so on every path): each attempt is exactly one open.
  std::filesystem::create_directories(BlockDir(backends[1], block.id));
  const std::string tmp = BlockTmpPath(backends[1], block.id);
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = tmp, .err = EIO, .times = 1});  // the first shard's open on p1
  const int p1_before = ops.Count(Op::kOpen, backends[1] + "/");
  const int p2_before = ops.Count(Op::kOpen, backends[2] + "/");
  ASSERT_TRUE(testing::DumpAll(store, block).ok());
  EXPECT_EQ(ops.Count(Op::kOpen, backends[2] + "/") - p2_before, 1) << "only the failed shard may go to the next path";
  EXPECT_EQ(ops.Count(Op::kOpen, backends[1] + "/") - p1_before, 2) << "the shard that worked was written again";
  EXPECT_EQ(store.backends().IoCounts(2).retries, 1);
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(testing::LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(block));
}

TEST_P(StoreRetryRulesTest, LayerWiseDumpsOfOneBlockStayOnOneBackend) {
  Backends backends(4, /*shared=*/false);
  PosixStore store;
  PosixStoreConfig cfg = backends.Config(GetParam());
  cfg.block_size = 4 * 8192;  // four layers of one shard each
  ASSERT_TRUE(store.Setup(cfg).ok());
  for (uint64_t n = 0; n < 8; ++n) {
    BlockData block(testing::MakeId(100 + n), n, /*shards=*/4);
    for (uint32_t layer = 0; layer < 4; ++layer) {  // one task per layer, as a layer-wise save does
      TransferTask task;
      task.shards.push_back(block.ShardAt(layer));
      Result<TaskHandle> h = store.Dump(std::move(task));
      ASSERT_TRUE(h.ok());
      ASSERT_TRUE(store.Wait(*h).ok()) << "block " << n << " layer " << layer;
    }
    const int primary = store.backends().Primary(BlockIdHasher{}(block.id));
    for (int b = 0; b < 4; ++b) {
      EXPECT_EQ(std::filesystem::exists(BlockPath(backends[b], block.id)), b == primary)
          << "block " << n << " on path " << b << " (primary " << primary << ")";
      EXPECT_TRUE(testing::TempFilesUnder(backends[b]).empty()) << "layers left behind on path " << b;
    }
    BlockData loaded(block.id, 0, /*shards=*/4);
    ASSERT_TRUE(testing::LoadAll(store, loaded).ok());
    EXPECT_TRUE(loaded.Equals(block)) << "block " << n << " came back different";
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, StoreRetryRulesTest, ::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio),
                         [](const auto& test) { return test.param == IoEngineKind::kAio ? "aio" : "psync"; });

TEST(PsyncDispatchQueueTest, Serves256ConcurrentSingleShardLoadsFromSeveralProducers) {
  Backends backends(2, /*shared=*/false);
  PosixStore store;
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.block_size = 8192;  // one shard per block
  ASSERT_TRUE(store.Setup(cfg).ok());
  constexpr int kBlocks = 256, kProducers = 8;
  std::vector<std::unique_ptr<BlockData>> blocks, loaded;
  for (int i = 0; i < kBlocks; ++i) {
    blocks.push_back(std::make_unique<BlockData>(testing::MakeId(1000 + i), i, /*shards=*/1));
    ASSERT_TRUE(testing::DumpAll(store, *blocks.back()).ok());
    loaded.push_back(std::make_unique<BlockData>(blocks.back()->id, 0, /*shards=*/1));
  }
  // Every load is submitted before any is waited on: all 256 are queued or in I/O at once.
  std::vector<Result<TaskHandle>> handles(kBlocks, Status::Internal("not submitted"));
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = p; i < kBlocks; i += kProducers) handles[i] = store.Load(loaded[i]->All());
    });
  }
  for (auto& t : producers) t.join();
  for (int i = 0; i < kBlocks; ++i) {
    ASSERT_TRUE(handles[i].ok()) << "load " << i << " refused: " << handles[i].status().ToString();
  }
  for (int i = 0; i < kBlocks; ++i) {
    const Status s = store.Wait(*handles[i]);
    ASSERT_TRUE(s.ok()) << "load " << i << ": " << s.ToString();
    EXPECT_TRUE(loaded[i]->Equals(*blocks[i])) << "load " << i << " returned another block's data";
  }
}

}  // namespace
}  // namespace kvchaos::store
