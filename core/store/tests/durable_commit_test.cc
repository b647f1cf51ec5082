// Durable commits (store option durable_commit) on both engines: every acknowledged block survives
// a power loss of the storage (CrashFileOps puts the tree back "as of the last sync"), without the
// option a power loss leaves misses and never bad data; the order of the syncs (data, rename,
// directory); blocks that commit together share one directory fsync (group commit); a new shard
// directory makes its backend directory synced too; failed syncs fail the block, or retry its
// write on the next path.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/store/posix_store.h"
#include "core/store/tests/crash_file_ops.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using testing::Backends;
using testing::BlockData;
using testing::CrashAioOps;
using testing::CrashFileOps;
using testing::DumpAll;
using testing::Eventually;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::IdWithPrimary;
using testing::LoadAll;
using testing::Op;

std::string EngineName(IoEngineKind k) { return k == IoEngineKind::kAio ? "aio" : "psync"; }

// A block id in the shard directory `<3 hex>` = "abc" (the first 12 bits), the k-th of them.
BlockId InDirAbc(uint64_t k) {
  BlockId id = testing::MakeId(k);
  id.bytes[0] = 0xab;
  id.bytes[1] = static_cast<uint8_t>(0xc0 | (k & 0x0f));
  id.bytes[2] = static_cast<uint8_t>(k >> 4);
  return id;
}

// Calls of `op` on exactly `path` (Count matches prefixes).
int CallsOn(FaultFileOps& ops, Op op, const std::string& path) {
  int n = 0;
  for (const auto& [call, at] : ops.Calls()) n += call == op && at == path;
  return n;
}

// Dumps `blocks` with all tasks in flight at once; the first failure.
Status DumpTogether(Store& store, std::vector<std::unique_ptr<BlockData>>& blocks) {
  std::vector<TaskHandle> handles;
  for (auto& b : blocks) {
    Result<TaskHandle> h = store.Dump(b->All());
    if (!h.ok()) return h.status();
    handles.push_back(*h);
  }
  Status first;
  for (TaskHandle h : handles) {
    Status s = store.Wait(h);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

class DurableCommitTest : public ::testing::TestWithParam<IoEngineKind> {
 protected:
  PosixStoreConfig Config(const Backends& backends, bool durable) const {
    PosixStoreConfig cfg = backends.Config(GetParam());
    cfg.durable_commit = durable;
    return cfg;
  }
};

// How many of `blocks` a fresh store reads back equal; every other one must be a plain miss.
int CountIntactAfterCrash(const Backends& backends, IoEngineKind engine,
                          std::vector<std::unique_ptr<BlockData>>& blocks) {
  PosixStore reader;
  Status s = reader.Setup(backends.Config(engine));
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return -1;
  int intact = 0;
  for (auto& b : blocks) {
    BlockData loaded(b->id, 999);
    const Status l = LoadAll(reader, loaded);
    if (l.ok() && loaded.Equals(*b)) {
      ++intact;
    } else {
      EXPECT_EQ(l.code(), StatusCode::kNotFound) << "block " << b->id.Hex() << " after the crash: neither intact "
                                                 << "nor a miss: " << (l.ok() ? "OK with other bytes" : l.ToString());
    }
  }
  for (const BackendStatus& st : reader.BackendStates()) {
    EXPECT_TRUE(st.available) << st.path << " was excluded by reads of crashed block files";
    EXPECT_EQ(st.window_failures, 0) << st.path << ": a miss must not be a health failure";
  }
  return intact;
}

TEST_P(DurableCommitTest, EveryAcknowledgedBlockSurvivesAPowerLoss) {
  Backends backends(3, /*shared=*/true);
  CrashFileOps model((backends.root() / "data").string());
  CrashAioOps aio(model);
  std::vector<std::unique_ptr<BlockData>> blocks;
  for (int i = 0; i < 24; ++i) blocks.push_back(std::make_unique<BlockData>(testing::MakeId(i), i));
  {
    PosixStore store(PosixStoreDeps{.file_ops = &model, .aio_ops = &aio});
    ASSERT_TRUE(store.Setup(Config(backends, /*durable=*/true)).ok());
    const Status s = DumpTogether(store, blocks);
    ASSERT_TRUE(s.ok()) << s.ToString();
    model.Crash();  // the power goes while the store is still up
  }
  EXPECT_EQ(CountIntactAfterCrash(backends, GetParam(), blocks), 24) << "acknowledged blocks were lost";
}

TEST_P(DurableCommitTest, WithoutTheOptionAPowerLossLeavesMissesNeverBadData) {
  Backends backends(3, /*shared=*/true);
  CrashFileOps model((backends.root() / "data").string());
  CrashAioOps aio(model);
  std::vector<std::unique_ptr<BlockData>> blocks;
  for (int i = 0; i < 12; ++i) blocks.push_back(std::make_unique<BlockData>(testing::MakeId(i), i));
  {
    PosixStore store(PosixStoreDeps{.file_ops = &model, .aio_ops = &aio});
    ASSERT_TRUE(store.Setup(Config(backends, /*durable=*/false)).ok());
    ASSERT_TRUE(DumpTogether(store, blocks).ok());
    EXPECT_EQ(aio.syncs(), 0) << "cache semantics: the data path must not sync";
    model.Crash();
  }
  // Nothing was synced: every block is gone, and each one reads as a miss (checked inside).
  EXPECT_EQ(CountIntactAfterCrash(backends, GetParam(), blocks), 0);
}

// The rename's directory synced but not the data (what a crash can leave behind when names and
// data reach the disk in another order): empty block files, read as misses, no health sample.
TEST_P(DurableCommitTest, EmptyFilesLeftByAPowerLossAreMisses) {
  Backends backends(2, /*shared=*/true);
  CrashFileOps model((backends.root() / "data").string());
  std::vector<std::unique_ptr<BlockData>> blocks;
  for (int i = 0; i < 6; ++i) blocks.push_back(std::make_unique<BlockData>(testing::MakeId(i), i));
  {
    PosixStore store(PosixStoreDeps{.file_ops = &model});
    ASSERT_TRUE(store.Setup(Config(backends, /*durable=*/false)).ok());
    ASSERT_TRUE(DumpTogether(store, blocks).ok());
    for (auto& b : blocks) {
      for (const std::string& dir : {backends[0], BlockDir(backends[0], b->id)}) {
        ASSERT_TRUE(SyncDirectory(model, backends[0], dir).ok());
      }
    }
    model.Crash();
  }
  for (auto& b : blocks) {
    ASSERT_TRUE(std::filesystem::exists(BlockPath(backends[0], b->id)));
    ASSERT_EQ(std::filesystem::file_size(BlockPath(backends[0], b->id)), 0u) << "the test needs empty files";
  }
  EXPECT_EQ(CountIntactAfterCrash(backends, GetParam(), blocks), 0);
}

TEST_P(DurableCommitTest, BlocksCommittingTogetherShareOneDirectoryFsync) {
  Backends backends(1, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(Config(backends, true)).ok());
  const std::string dir = backends[0] + "/abc";
  // The first block's directory fsync hangs (block files there are fdatasynced, not fsynced);
  // the other 15 blocks commit meanwhile and queue for the next round.
  ops.Add(FaultRule{.op = Op::kFsync, .prefix = dir, .hang = true, .times = 1});
  std::vector<std::unique_ptr<BlockData>> blocks;
  for (int k = 0; k < 16; ++k) blocks.push_back(std::make_unique<BlockData>(InDirAbc(k), k));
  Result<TaskHandle> first = store.Dump(blocks[0]->All());
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(Eventually([&] { return CallsOn(ops, Op::kFsync, dir) == 1; })) << "the first fsync never came";
  std::vector<std::unique_ptr<BlockData>> rest;
  for (int k = 1; k < 16; ++k) rest.push_back(std::move(blocks[k]));
  std::atomic<bool> acknowledged{false};
  Status status;
  std::thread dumper([&] {
    status = DumpTogether(store, rest);
    acknowledged = true;
  });
  EXPECT_TRUE(Eventually([&] { return store.dir_syncer()->pending() == 16; }))
      << "the blocks never all reached their directory sync";
  EXPECT_FALSE(acknowledged) << "blocks were acknowledged before their directory was synced";
  ops.Release();
  dumper.join();
  ASSERT_TRUE(store.Wait(*first).ok());
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(CallsOn(ops, Op::kFsync, dir), 2)
      << "16 blocks in one directory: one fsync for the held block, one for the 15 that queued behind it";
  EXPECT_EQ(store.dir_syncer()->rounds(), 2u);
}

TEST_P(DurableCommitTest, ANewShardDirectorySyncsItsBackendDirectoryOnce) {
  Backends backends(1, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(Config(backends, true)).ok());
  auto root_syncs = [&] {
    int n = 0;
    for (const auto& [op, path] : ops.Calls()) n += op == Op::kFsync && path == backends[0];
    return n;
  };
  BlockData a(InDirAbc(1), 1), b(InDirAbc(2), 2);
  ASSERT_TRUE(DumpAll(store, a).ok());
  EXPECT_EQ(root_syncs(), 1) << "the new shard directory's entry must be made durable";
  ASSERT_TRUE(DumpAll(store, b).ok());
  EXPECT_EQ(root_syncs(), 1) << "a shard directory already durable needs no second sync of its parent";
  EXPECT_EQ(CallsOn(ops, Op::kFsync, backends[0] + "/abc"), 2) << "one directory fsync per block committed alone";
}

TEST_P(DurableCommitTest, AFailedDirectoryFsyncFailsTheBlockAndCountsAgainstThePath) {
  Backends backends(1, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(Config(backends, true)).ok());
  ops.Add(FaultRule{.op = Op::kFsync, .prefix = backends[0] + "/abc", .err = EIO, .times = 1});
  BlockData block(InDirAbc(3), 3);
  const Status s = DumpAll(store, block);
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  EXPECT_NE(s.message().find("not made durable"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("fsync('" + backends[0] + "/abc')"), std::string::npos) << s.ToString();
  EXPECT_GE(store.backends().window(0).failures(), 1) << "a failed fsync is a failure of its path";
  ASSERT_TRUE(DumpAll(store, block).ok()) << "the caller's retry commits it durably";
}

INSTANTIATE_TEST_SUITE_P(Engines, DurableCommitTest, ::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio),
                         [](const auto& param_info) { return EngineName(param_info.param); });

// psync: the block's data is synced before its rename, and the directory after it, in that order.
TEST(DurableCommitOrderTest, PsyncSyncsDataThenRenamesThenSyncsTheDirectory) {
  Backends backends(1, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.durable_commit = true;
  ASSERT_TRUE(store.Setup(cfg).ok());
  BlockData block(InDirAbc(5), 5);
  ASSERT_TRUE(DumpAll(store, block).ok());
  const std::string tmp = BlockTmpPath(backends[0], block.id);
  std::vector<std::string> seen;
  for (const auto& [op, path] : ops.Calls()) {
    if (op == Op::kWrite && path == tmp) seen.push_back("write");
    if (op == Op::kFdatasync && path == tmp) seen.push_back("fdatasync");
    if (op == Op::kRename && path == tmp) seen.push_back("rename");
    if (op == Op::kFsync && path == BlockDir(backends[0], block.id)) seen.push_back("fsync dir");
  }
  // The two shards may be written concurrently; each sync follows a write, the rename follows
  // both syncs, the directory fsync comes last.
  ASSERT_EQ(seen.size(), 6u) << ::testing::PrintToString(seen);
  int writes = 0, syncs = 0;
  for (size_t i = 0; i < 4; ++i) {
    writes += seen[i] == "write";
    syncs += seen[i] == "fdatasync";
    EXPECT_LE(syncs, writes) << "a data sync before its write: " << ::testing::PrintToString(seen);
  }
  EXPECT_EQ(writes, 2) << ::testing::PrintToString(seen);
  EXPECT_EQ(syncs, 2) << "each shard's data must be synced before the rename: " << ::testing::PrintToString(seen);
  EXPECT_EQ(seen[4], "rename") << ::testing::PrintToString(seen);
  EXPECT_EQ(seen[5], "fsync dir") << "the directory is synced after the rename: " << ::testing::PrintToString(seen);
}

TEST(DurableCommitOrderTest, PsyncWithoutTheOptionNeverSyncs) {
  Backends backends(1, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kPsync)).ok());
  const int probe_fsyncs = ops.Count(Op::kFsync, backends[0]);
  BlockData block(InDirAbc(6), 6);
  ASSERT_TRUE(DumpAll(store, block).ok());
  EXPECT_EQ(ops.Count(Op::kFdatasync, backends[0]), 0);
  EXPECT_EQ(ops.Count(Op::kFsync, backends[0]), probe_fsyncs) << "cache semantics: upstream's data path never syncs";
  EXPECT_EQ(store.dir_syncer(), nullptr);
}

// A data sync that fails is the attempt's failure: the shard is written again on the next path.
TEST(DurableCommitOrderTest, AFailedDataSyncRetriesTheWriteOnTheNextPath) {
  Backends backends(2, /*shared=*/true);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.durable_commit = true;
  ASSERT_TRUE(store.Setup(cfg).ok());
  ops.Add(FaultRule{.op = Op::kFdatasync, .prefix = backends[0] + "/", .err = EIO, .times = 1});
  BlockData block(IdWithPrimary(0, 2), 7);
  const Status s = DumpAll(store, block);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(store.backends().window(0).failures(), 1) << "the failed fdatasync counts against its path";
  EXPECT_GE(ops.Count(Op::kFdatasync, backends[1] + "/"), 1) << "the shard was not written again on the next path";
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(block));
}

}  // namespace
}  // namespace kvchaos::store
