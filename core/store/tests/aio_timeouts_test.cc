// aio attempts that run out of time on the last path (issue 18, upstream's catalogue): a task whose
// last attempt stalls in its open, or whose completion is lost, ends in Timeout (not a hang, not
// another error); a multi-shard dump that timed out is never committed when its stalled open goes
// on late, and leaves no temp file behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/holding_aio_ops.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using testing::Backends;
using testing::BlockData;
using testing::Eventually;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::HoldingAioOps;
using testing::IdWithPrimary;
using testing::Op;

constexpr int64_t kTimeoutMs = 200;  // 100 ms per attempt over two paths

TEST(AioTimeoutsTest, AnOpenThatStallsOnTheLastPathEndsTheWaitInTimeout) {
  Backends backends(2, /*shared=*/false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, kTimeoutMs)).ok());
  BlockData block(IdWithPrimary(0, 2), 1);
  testing::PlaceBlock(backends[0], block);
  testing::PlaceBlock(backends[1], block);
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends.root().string(), .hang = true});  // every path stalls
  BlockData loaded(block.id, 0);
  const Status s = testing::LoadAll(store, loaded);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << "a stalled open on the last path must end in Timeout: " << s.ToString();
  ops.Release();  // the stalled opens go on; the store's destructor waits for them
}

TEST(AioTimeoutsTest, ACompletionLostOnTheLastPathEndsTheWaitInTimeout) {
  Backends backends(2, /*shared=*/false);
  HoldingAioOps aio;
  BlockData block(IdWithPrimary(0, 2), 2);
  testing::PlaceBlock(backends[0], block);
  testing::PlaceBlock(backends[1], block);
  PosixStore store(PosixStoreDeps{.aio_ops = &aio});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, kTimeoutMs)).ok());
  aio.HoldPrefix(backends.root().string(), -1);  // no completion of any path arrives in time
  BlockData loaded(block.id, 0);
  const Status s = testing::LoadAll(store, loaded);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << "a lost completion on the last path must end in Timeout: "
                                            << s.ToString();
  EXPECT_GE(aio.held_total(), 2) << "both paths' completions must have been held";
  aio.Release();
}

TEST(AioTimeoutsTest, AMultiShardDumpThatTimedOutIsNeverCommittedAfterALateOpen) {
  Backends backends(1, /*shared=*/false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, kTimeoutMs)).ok());
  BlockData block(testing::MakeId(9), 9, /*shards=*/2);
  std::filesystem::create_directories(BlockDir(backends[0], block.id));
  // One shard's open stalls past its deadline; the other shard is written on time.
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = BlockTmpPath(backends[0], block.id), .hang = true, .times = 1});
  const Status s = testing::DumpAll(store, block);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  ops.Release();  // the stalled open goes on, late, and its write completes
  EXPECT_TRUE(Eventually([&] { return store.tracked_temp_blocks() == 0; })) << "the late attempt never ended";
  EXPECT_FALSE(std::filesystem::exists(BlockPath(backends[0], block.id)))
      << "a dump that timed out was committed by its late attempt";
  EXPECT_FALSE((*store.Lookup(std::vector<BlockId>{block.id}))[0]);
  EXPECT_TRUE(testing::TempFilesUnder(backends[0]).empty()) << "the timed-out dump left its temp file";
}

}  // namespace
}  // namespace kvchaos::store
