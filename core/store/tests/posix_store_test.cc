// PosixStore end to end on real files: round trips, commit visibility, fixed routing, failover on
// errors and on timeouts for both engines, NotFound as a plain miss, late completions kept away
// from caller memory, passive exclusion and recovery back to the primary.
#include "core/store/posix_store.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/holding_aio_ops.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using namespace std::chrono_literals;
using testing::BlockData;
using testing::DumpAll;
using testing::LoadAll;
using testing::Backends;
using testing::Eventually;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::IdWithPrimary;
using testing::Op;
using testing::PlaceBlock;

std::string EngineName(IoEngineKind k) { return k == IoEngineKind::kAio ? "aio" : "psync"; }

class PosixStoreEngineTest : public ::testing::TestWithParam<IoEngineKind> {};

TEST_P(PosixStoreEngineTest, DumpLookupLoadRemoveRoundTrip) {
  Backends backends(3, false);
  PosixStore store;
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  std::vector<std::unique_ptr<BlockData>> blocks;
  for (int i = 0; i < 6; ++i) blocks.push_back(std::make_unique<BlockData>(testing::MakeId(i), i));
  for (auto& b : blocks) ASSERT_TRUE(DumpAll(store, *b).ok());
  std::vector<BlockId> ids;
  for (auto& b : blocks) ids.push_back(b->id);
  ids.push_back(testing::MakeId(1000));
  Result<std::vector<bool>> found = store.Lookup(ids);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, (std::vector<bool>{true, true, true, true, true, true, false}));
  for (int i = 0; i < 6; ++i) {
    BlockData loaded(blocks[i]->id, 999);
    ASSERT_TRUE(LoadAll(store, loaded).ok());
    EXPECT_TRUE(loaded.Equals(*blocks[i])) << "block " << i << " came back different";
  }
  ASSERT_TRUE(store.Remove(std::vector<BlockId>{ids[0], ids[6]}).ok()) << "removing a missing block is not an error";
  EXPECT_FALSE((*store.Lookup(std::vector<BlockId>{ids[0]}))[0]);
}

TEST_P(PosixStoreEngineTest, BlockIsVisibleOnlyAfterItsLastShard) {
  Backends backends(2, false);
  PosixStore store;
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  BlockData block(testing::MakeId(1), 1);
  Result<TaskHandle> h = store.Dump(TransferTask{{block.ShardAt(0)}});
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(store.Wait(*h).ok());
  EXPECT_FALSE((*store.Lookup(std::vector<BlockId>{block.id}))[0]) << "a block without its last shard must not be visible";
  h = store.Dump(TransferTask{{block.ShardAt(1)}});
  ASSERT_TRUE(store.Wait(*h).ok());
  EXPECT_TRUE((*store.Lookup(std::vector<BlockId>{block.id}))[0]);
  BlockData loaded(block.id, 5);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(block));
}

// A task whose blocks have inline headers (store.h): the header is one more shard of 4096 bytes
// at offset block_size and the block's last: data and header in one task commit together; data
// alone commits nothing until a later task brings the header. Reads get both back.
TEST_P(PosixStoreEngineTest, AnInlineHeaderIsTheBlocksLastShardInTheSameFile) {
  Backends backends(1, false);
  PosixStore store;
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  const uint32_t header_index = static_cast<uint32_t>(store.config().shards_per_block());
  AlignedBuffer header(kInlineHeaderBytes);
  testing::Fill(header, 77);
  BlockData together(testing::MakeId(1), 1);
  TransferTask task = together.All();
  task.inline_header = true;
  task.shards.push_back(Shard{together.id, header_index, {header.span()}});
  Result<TaskHandle> h = store.Dump(task);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_TRUE(store.Wait(*h).ok());
  const std::string path = BlockPath(store.config().storage_backends[0], together.id);
  EXPECT_EQ(std::filesystem::file_size(path), store.config().block_size + kInlineHeaderBytes);

  BlockData later(testing::MakeId(2), 2);
  TransferTask data = later.All();
  data.inline_header = true;
  h = store.Dump(data);
  ASSERT_TRUE(h.ok() && store.Wait(*h).ok());
  EXPECT_FALSE((*store.Lookup(std::vector<BlockId>{later.id}))[0]) << "visible before its header was written";
  h = store.Dump(TransferTask{{Shard{later.id, header_index, {header.span()}}}, true});
  ASSERT_TRUE(h.ok() && store.Wait(*h).ok());
  EXPECT_TRUE((*store.Lookup(std::vector<BlockId>{later.id}))[0]);
  EXPECT_EQ(store.tracked_temp_blocks(), 0u);

  for (BlockData* block : {&together, &later}) {
    BlockData loaded(block->id, 999);
    AlignedBuffer header_back(kInlineHeaderBytes);
    TransferTask read = loaded.All();
    read.inline_header = true;
    read.shards.push_back(Shard{block->id, header_index, {header_back.span()}});
    h = store.Load(read);
    ASSERT_TRUE(h.ok() && store.Wait(*h).ok());
    EXPECT_TRUE(loaded.Equals(*block));
    EXPECT_EQ(std::memcmp(header_back.data(), header.data(), kInlineHeaderBytes), 0) << "the header came back different";
    BlockData plain(block->id, 5);
    ASSERT_TRUE(LoadAll(store, plain).ok()) << "a reader that knows nothing of headers reads the data as before";
    EXPECT_TRUE(plain.Equals(*block));
  }
  // A block written without a header has no header region: reading one is a miss.
  BlockData headless(testing::MakeId(3), 3);
  ASSERT_TRUE(DumpAll(store, headless).ok());
  TransferTask read_header{{Shard{headless.id, header_index, {header.span()}}}, true};
  h = store.Load(read_header);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(store.Wait(*h).code(), StatusCode::kNotFound);
}

TEST_P(PosixStoreEngineTest, EveryBlockLandsOnItsPrimaryByTotalCountHash) {
  Backends backends(3, false);
  PosixStore store;
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  for (int i = 0; i < 12; ++i) {
    BlockData block(testing::MakeId(i), i);
    ASSERT_TRUE(DumpAll(store, block).ok());
    const int primary = static_cast<int>(BlockIdHasher{}(block.id) % 3);
    for (int b = 0; b < 3; ++b) {
      EXPECT_EQ(std::filesystem::exists(BlockPath(backends[b], block.id)), b == primary)
          << "block " << block.id.Hex() << " must be stored on backend " << primary << " only";
    }
  }
}

TEST_P(PosixStoreEngineTest, FailedIoRetriesOnTheNextPathAndTripsTheBadOne) {
  Backends backends(3, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[1] + "/", .err = EIO});
  // Two blocks whose primary is 1: both must land on 2 (the next path), and two failures trip 1.
  BlockData a(IdWithPrimary(1, 3, 0), 1);
  BlockData b(IdWithPrimary(1, 3, 500), 2);
  ASSERT_TRUE(DumpAll(store, a).ok()) << "a failed write must be retried on the next path";
  EXPECT_TRUE(std::filesystem::exists(BlockPath(backends[2], a.id)));
  EXPECT_FALSE(store.backends().available(1) && store.backends().window(1).failures() >= 2);
  ASSERT_TRUE(DumpAll(store, b).ok());
  EXPECT_FALSE(store.backends().available(1)) << "threshold failures must exclude the path (passive feedback)";
  EXPECT_TRUE(store.CheckHealth().ok());
  // Counted on the block's own file: the recovery prober keeps opening probe files on path 1.
  const std::string a_on_excluded = BlockPath(backends[1], a.id);
  const int opens_before = ops.Count(Op::kOpen, a_on_excluded);
  BlockData loaded(a.id, 0);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(a));
  EXPECT_EQ(ops.Count(Op::kOpen, a_on_excluded), opens_before) << "an excluded path must not get business I/O";
}

TEST_P(PosixStoreEngineTest, NotFoundIsAMissWithoutRetryOrSample) {
  Backends backends(3, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  const int opens1 = ops.Count(Op::kOpen, backends[1] + "/");  // the startup probe's
  const int opens2 = ops.Count(Op::kOpen, backends[2] + "/");
  BlockData missing(IdWithPrimary(0, 3), 1);
  const Status s = LoadAll(store, missing);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_EQ(ops.Count(Op::kOpen, backends[1] + "/"), opens1) << "NotFound must not be retried on another path";
  EXPECT_EQ(ops.Count(Op::kOpen, backends[2] + "/"), opens2);
  EXPECT_FALSE((*store.Lookup(std::vector<BlockId>{missing.id}))[0]);
  EXPECT_EQ(ops.Count(Op::kStat, backends[1] + "/"), 0) << "a lookup miss must not be retried either";
  EXPECT_EQ(store.backends().window(0).count(), 0) << "a miss is not a health sample";
}

TEST_P(PosixStoreEngineTest, AllPathsFailingGivesTheRealErrorAndThenStoreUnhealthy) {
  Backends backends(2, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends.root().string(), .err = EROFS});
  BlockData a(testing::MakeId(1), 1);
  Status s = DumpAll(store, a);
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  EXPECT_EQ(s.sys_errno(), EROFS) << "Wait must return the first failure's real code and errno";
  s = DumpAll(store, a);
  EXPECT_FALSE(store.backends().any_available());
  EXPECT_EQ(store.CheckHealth().code(), StatusCode::kStoreUnhealthy);
  s = DumpAll(store, a);
  EXPECT_EQ(s.code(), StatusCode::kStoreUnhealthy) << s.ToString();
  EXPECT_EQ(store.Lookup(std::vector<BlockId>{a.id}).status().code(), StatusCode::kStoreUnhealthy);
}

TEST_P(PosixStoreEngineTest, ShardsSplitOverSeparateStoragesAreNeverCommittedTorn) {
  Backends backends(2, /*shared=*/false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  BlockData block(IdWithPrimary(0, 2), 7);
  // One shard's open on the primary fails: that shard is written on path 1, the other on path 0 —
  // two different files, neither of which holds the whole block.
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[0] + "/", .err = EIO, .times = 1});
  const Status s = DumpAll(store, block);
  EXPECT_EQ(s.code(), StatusCode::kIoError) << "a block whose shards landed in different files must fail: " << s.ToString();
  EXPECT_NE(s.message().find("not the same storage"), std::string::npos) << s.ToString();
  for (int b = 0; b < 2; ++b) {
    EXPECT_FALSE(std::filesystem::exists(BlockPath(backends[b], block.id))) << "a torn block was committed on path " << b;
  }
  EXPECT_FALSE((*store.Lookup(std::vector<BlockId>{block.id}))[0]);
  EXPECT_TRUE(Eventually([&] { return testing::TempFilesUnder(backends.root().string()).empty(); })) << "the torn temp files must be removed";
  // The caller's retry (no fault now) stores the block whole.
  ASSERT_TRUE(DumpAll(store, block).ok());
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(block));
}

TEST_P(PosixStoreEngineTest, AShardInALaterTaskOnAnotherStorageIsNeverCommittedTorn) {
  Backends backends(2, /*shared=*/false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  BlockData block(IdWithPrimary(0, 2), 9);
  Result<TaskHandle> h = store.Dump(TransferTask{{block.ShardAt(0)}});
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(store.Wait(*h).ok()) << "shard 0 waits on path 0 for its block's last shard";
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[0] + "/", .err = EIO, .times = 1});
  h = store.Dump(TransferTask{{block.ShardAt(1)}});
  ASSERT_TRUE(h.ok());
  const Status s = store.Wait(*h);
  EXPECT_EQ(s.code(), StatusCode::kIoError) << "the last shard went to another disk than shard 0: " << s.ToString();
  for (int b = 0; b < 2; ++b) {
    EXPECT_FALSE(std::filesystem::exists(BlockPath(backends[b], block.id))) << "a torn block was committed on path " << b;
  }
}

TEST_P(PosixStoreEngineTest, AFailedRenameIsNotBlamedOnAPathWithoutTheTempFile) {
  Backends backends(2, /*shared=*/false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  BlockData block(IdWithPrimary(0, 2), 10);
  ops.Add(FaultRule{.op = Op::kRename, .prefix = backends[0] + "/", .err = EIO});
  const Status s = DumpAll(store, block);
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  EXPECT_EQ(s.sys_errno(), EIO) << "the commit's answer must be the written path's own error: " << s.ToString();
  EXPECT_EQ(store.backends().window(1).failures(), 0)
      << "path 1 never had the block's temp file; its ENOENT must not count against it";
  EXPECT_FALSE(std::filesystem::exists(BlockPath(backends[1], block.id)));
}

TEST_P(PosixStoreEngineTest, ShardsSplitOverPathsToOneStorageStillCommit) {
  Backends backends(2, /*shared=*/true);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(GetParam())).ok());
  BlockData block(IdWithPrimary(0, 2), 8);
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[0] + "/", .err = EIO, .times = 1});
  // Both paths reach the same temp file, so the block is whole whichever path wrote which shard.
  ASSERT_TRUE(DumpAll(store, block).ok()) << "paths to the same storage must still commit after a failover";
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(block));
}

INSTANTIATE_TEST_SUITE_P(Engines, PosixStoreEngineTest, ::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio),
                         [](const auto& param_info) { return EngineName(param_info.param); });

TEST(PosixStoreTest, AttemptTimeoutIsTimeoutOverTotalPathsWithOneMillisecondFloor) {
  EXPECT_EQ(PosixStore::AttemptTimeout(0, 3), Duration::zero()) << "0 disables timeouts";
  EXPECT_EQ(PosixStore::AttemptTimeout(3000, 3), Millis(1000));
  EXPECT_EQ(PosixStore::AttemptTimeout(2, 4), Millis(1)) << "positive values are at least 1 ms";
  EXPECT_EQ(PosixStore::AttemptTimeout(1000, 4), Millis(250));
}

TEST(PosixStoreTest, CheckHealthDoesNoIo) {
  Backends backends(2, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.health.health_check_interval_s = 3600;
  cfg.health.health_check_timeout_s = 1;
  ASSERT_TRUE(store.Setup(cfg).ok());
  const int stats = ops.Count(Op::kStat, backends.root().string());
  const int opens = ops.Count(Op::kOpen, backends.root().string());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(store.CheckHealth().ok());
  EXPECT_EQ(ops.Count(Op::kStat, backends.root().string()), stats);
  EXPECT_EQ(ops.Count(Op::kOpen, backends.root().string()), opens);
}

TEST(PosixStoreTest, InvalidTasksAreRejectedBeforeAnyIo) {
  Backends backends(1, false);
  PosixStore store;
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kPsync)).ok());
  BlockData block(testing::MakeId(1), 1);
  TransferTask bad{{block.ShardAt(0)}};
  bad.shards[0].index = 7;
  EXPECT_EQ(store.Dump(bad).status().code(), StatusCode::kInvalidArgument);
  TransferTask short_shard{{block.ShardAt(0)}};
  short_shard.shards[0].buffers.pop_back();
  Result<TaskHandle> h = store.Load(short_shard);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("want shard_size 8192"), std::string::npos) << h.status().message();
  // The header's index only in a task that says its blocks have one, and only of its size.
  TransferTask no_header{{block.ShardAt(0)}};
  no_header.shards[0].index = 2;
  h = store.Dump(no_header);
  EXPECT_NE(h.status().message().find("past the last shard of a block (1)"), std::string::npos)
      << h.status().ToString();
  no_header.inline_header = true;
  h = store.Dump(no_header);
  EXPECT_NE(h.status().message().find("want the inline header's 4096"), std::string::npos) << h.status().ToString();
  EXPECT_EQ(store.Wait(12345).code(), StatusCode::kInvalidArgument);
}

// ---- Timeouts and late completions -------------------------------------------------------------

// psync: the primary's read hangs past the attempt timeout; the retry on the next path wins; after
// Wait returns the caller overwrites its buffers, then the hung read completes: it must not land.
TEST(PosixStoreTimeoutTest, PsyncLateReadNeverWritesTheCallersBuffer) {
  Backends backends(2, true);
  FaultFileOps ops;
  BlockData block(IdWithPrimary(0, 2), 3);
  auto store = std::make_unique<PosixStore>(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store->Setup(backends.Config(IoEngineKind::kPsync, /*timeout_ms=*/200)).ok());
  ASSERT_TRUE(DumpAll(*store, block).ok());
  ops.Add(FaultRule{.op = Op::kRead, .prefix = backends[0] + "/", .hang = true, .times = 1});
  BlockData loaded(block.id, 77);
  Result<TaskHandle> h = store->Load(TransferTask{{loaded.ShardAt(0)}});
  ASSERT_TRUE(h.ok());
  const Status s = store->Wait(*h);
  ASSERT_TRUE(s.ok()) << "the retry on the second path must serve the read: " << s.ToString();
  EXPECT_EQ(std::memcmp(loaded.tensors[0]->data(), block.tensors[0]->data(), 4096), 0);
  EXPECT_EQ(store->backends().window(0).failures(), 1) << "the timed-out attempt is one failure of its path";
  loaded.Set(std::byte{0xEE});
  ops.Release();  // the hung pread now completes, into its own buffer
  store.reset();  // waits for the late attempt to end
  EXPECT_TRUE(loaded.AllBytes(std::byte{0xEE})) << "a late read completion wrote into the caller's buffer";
}

// psync: the primary's write hangs; the retry writes the saved copy; the caller then reuses its
// buffer; the late write completes — the block must still hold the original data.
TEST(PosixStoreTimeoutTest, PsyncWriteRetrySendsSavedDataAndLateWriteCannotCorrupt) {
  Backends backends(2, true);
  FaultFileOps ops;
  BlockData block(IdWithPrimary(0, 2), 4);
  BlockData original(block.id, 4);
  {
    PosixStore store(PosixStoreDeps{.file_ops = &ops});
    ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kPsync, 200)).ok());
    ops.Add(FaultRule{.op = Op::kWrite, .prefix = backends[0] + "/", .hang = true, .times = 1});
    const Status s = DumpAll(store, block);
    ASSERT_TRUE(s.ok()) << s.ToString();
    block.Set(std::byte{0x11});  // the caller reuses its buffers once Wait returned
    ops.Release();
  }  // waits for the late write
  PosixStore reader;
  ASSERT_TRUE(reader.Setup(backends.Config(IoEngineKind::kPsync)).ok());
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(LoadAll(reader, loaded).ok());
  EXPECT_TRUE(loaded.Equals(original)) << "the stored block differs from what was dumped";
}

// The attempt timeout runs from when a worker starts the attempt: with one worker, ten 40 ms reads
// queue for 400 ms in total, far past the 250 ms attempt timeout, yet none of them may time out.
TEST(PosixStoreTimeoutTest, QueueingIsNotCountedAgainstTheAttemptTimeout) {
  Backends backends(2, true);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync, /*timeout_ms=*/500);
  cfg.concurrency = 1;
  ASSERT_TRUE(store.Setup(cfg).ok());
  BlockData block(IdWithPrimary(0, 2), 9);
  ASSERT_TRUE(DumpAll(store, block).ok());
  ops.Add(FaultRule{.op = Op::kRead, .prefix = backends[0] + "/", .delay = 40ms});
  std::vector<std::unique_ptr<BlockData>> reads;
  TransferTask task;
  for (int i = 0; i < 10; ++i) {
    reads.push_back(std::make_unique<BlockData>(block.id, 100 + i));
    task.shards.push_back(reads.back()->ShardAt(i % 2));
  }
  Result<TaskHandle> h = store.Load(std::move(task));
  ASSERT_TRUE(h.ok());
  const Status s = store.Wait(*h);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(store.backends().window(0).failures(), 0) << "time spent queued was counted as an attempt timeout";
  EXPECT_EQ(ops.Count(Op::kOpen, backends[1] + "/"), 1) << "no read should have been retried on the second path";
}

// A path whose write hung may hang a rename too (a metadata call has no timeout): the commit must
// go through a path that did not just fail for this block.
TEST(PosixStoreTimeoutTest, CommitAvoidsThePathWhereTheWriteTimedOut) {
  Backends backends(2, true);
  FaultFileOps ops;
  BlockData block(IdWithPrimary(0, 2), 8);
  {
    PosixStore store(PosixStoreDeps{.file_ops = &ops});
    PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync, 200);
    cfg.health.failure_threshold = 3;  // two timed-out shards leave the path available
    ASSERT_TRUE(store.Setup(cfg).ok());
    ops.Add(FaultRule{.op = Op::kWrite, .prefix = backends[0] + "/", .hang = true});
    ops.Add(FaultRule{.op = Op::kRename, .prefix = backends[0] + "/", .hang = true});
    const Status s = DumpAll(store, block);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(store.backends().available(0)) << "the test needs the hung path still available at commit";
    EXPECT_EQ(ops.Count(Op::kRename, backends[0] + "/"), 0) << "the commit went to the path that just hung";
    EXPECT_TRUE((*store.Lookup(std::vector<BlockId>{block.id}))[0]);
    ops.Release();
  }
}

// aio: the primary's completion is held back past the deadline; the read is served by the next
// path; the held completion, delivered after Wait returned, must not reach the caller's buffer.
TEST(PosixStoreTimeoutTest, AioFailsOverOnTimeoutAndIsolatesTheLateRead) {
  Backends backends(2, false);
  testing::HoldingAioOps aio;
  BlockData block(IdWithPrimary(0, 2), 5);
  PlaceBlock(backends[0], block);
  PlaceBlock(backends[1], block);
  {
    PosixStore store(PosixStoreDeps{.aio_ops = &aio});
    ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, 100)).ok());
    aio.HoldPrefix(backends[0] + "/", 1);
    BlockData loaded(block.id, 0);
    const Status s = LoadAll(store, loaded);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(loaded.Equals(block));
    EXPECT_EQ(aio.held_total(), 1) << "the primary's completion was never held: the test did not exercise a timeout";
    EXPECT_EQ(store.backends().window(0).failures(), 1);
    loaded.Set(std::byte{0xEE});
    aio.Release();
    EXPECT_TRUE(Eventually([&] { return store.backends().window(0).count() >= 2; }))
        << "the late completion should still be seen as a sample";
    EXPECT_TRUE(loaded.AllBytes(std::byte{0xEE})) << "a late aio read wrote into the caller's buffer";
  }
}

TEST(PosixStoreTimeoutTest, AioWriteFailsOverOnTimeout) {
  Backends backends(2, true);
  FaultFileOps ops;
  testing::HoldingAioOps aio([&ops](int fd) { return ops.PathOf(fd); });
  BlockData block(IdWithPrimary(0, 2), 6);
  PosixStore store(PosixStoreDeps{.file_ops = &ops, .aio_ops = &aio});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, 100)).ok());
  aio.HoldPrefix(backends[0] + "/", 1);
  ASSERT_TRUE(DumpAll(store, block).ok());
  EXPECT_EQ(aio.held_total(), 1);
  aio.Release();
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(block));
}

// ---- Passive exclusion and recovery ------------------------------------------------------------

TEST(PosixStoreRecoveryTest, ExcludedPrimaryRecoversThroughProbesAndTakesItsBlocksBack) {
  Backends backends(2, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.health.enabled = false;  // switches only the outer breaker: passive feedback and recovery stay
  ASSERT_TRUE(store.Setup(cfg).ok());
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[0] + "/", .err = EIO});
  BlockData a(IdWithPrimary(0, 2, 0), 1);
  BlockData b(IdWithPrimary(0, 2, 300), 2);
  ASSERT_TRUE(DumpAll(store, a).ok());
  ASSERT_TRUE(DumpAll(store, b).ok());
  ASSERT_FALSE(store.backends().available(0)) << "two failed writes must exclude the primary";
  EXPECT_TRUE(std::filesystem::exists(BlockPath(backends[1], a.id)));
  // While the path is still broken, probes fail and it stays out.
  ASSERT_TRUE(Eventually([&] { return store.monitor().probes_run() >= 3; }));
  EXPECT_FALSE(store.backends().available(0));
  // One open per probe; counted before Clear so that no successful probe is missed.
  const int opens_at_clear = ops.Count(Op::kOpen, backends[0] + "/");
  ops.Clear();
  ASSERT_TRUE(Eventually([&] { return store.backends().available(0); })) << "the path never recovered";
  EXPECT_GE(ops.Count(Op::kOpen, backends[0] + "/") - opens_at_clear, 8)
      << "recovery needs a full window (8) of successful probes";
  BlockData c(IdWithPrimary(0, 2, 900), 3);
  ASSERT_TRUE(DumpAll(store, c).ok());
  EXPECT_TRUE(std::filesystem::exists(BlockPath(backends[0], c.id))) << "after recovery blocks go to the primary again";
  const auto transitions = store.Transitions();
  ASSERT_EQ(transitions.size(), 2u);
  EXPECT_FALSE(transitions[0].available);
  EXPECT_TRUE(transitions[1].available);
}

}  // namespace
}  // namespace kvchaos::store
