// Abandoned temp files: TempFiles' rules on their own (remove only while the block is quiet, never
// under a newer attempt, wait for a removal before a new attempt starts), then end to end through
// the PosixStore — on the simulated disk and virtual time, a write completing after its timeout
// (both engines) has its temp file removed when its late completion arrives, on separate and on
// shared storages; on real files, a dump that fails after creating its temp file (write error,
// commit error) leaves none behind.
#include "core/store/temp_files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <thread>

#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/store_test_util.h"
#include "sim/virtual_disk.h"
#include "testing/temp_dir.h"

namespace kvchaos::store {
namespace {

using namespace std::chrono_literals;
using testing::BlockData;
using testing::BlockTempFiles;
using testing::ConfigFor;
using testing::DumpAll;
using testing::LoadAll;
using testing::TempFilesUnder;
using testing::Backends;
using testing::Eventually;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::IdWithPrimary;
using testing::MakeId;
using testing::Op;

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "(none)" : s;
}

void Touch(const std::string& path) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << "x";
}

// ---- TempFiles on its own ---------------------------------------------------------------------

class TempFilesRulesTest : public ::testing::Test {
 protected:
  kvchaos::testing::TempDir dir_{"kvchaos_tmpfiles"};
  FaultFileOps ops_;
  TempFiles temp_{Runtime::Real(), ops_};
  BlockId id_ = MakeId(7);
  std::string a_ = (dir_.path() / "a" / "x.tmp").string();
  std::string b_ = (dir_.path() / "b" / "x.tmp").string();
};

TEST_F(TempFilesRulesTest, AnAbandonedAttemptOfAQuietBlockLosesItsTempFile) {
  Touch(a_);
  temp_.Begin(id_);
  temp_.End(id_, /*written=*/false, a_);
  EXPECT_FALSE(std::filesystem::exists(a_)) << "the failed attempt's temp file was left behind";
  EXPECT_EQ(temp_.tracked(), 0u);
}

TEST_F(TempFilesRulesTest, ALateAttemptNeverRemovesWhatANewerAttemptWrites) {
  Touch(a_);
  temp_.Begin(id_);  // the old attempt, about to time out
  temp_.Begin(id_);  // the retry (or a newer dump): on shared storage the very same file
  temp_.End(id_, /*written=*/false, a_);  // the old one completes late while the retry still runs
  EXPECT_TRUE(std::filesystem::exists(a_)) << "removed the temp file while a newer attempt was writing it";
  temp_.End(id_, /*written=*/true, a_);  // the retry succeeded: its shard waits for the commit
  EXPECT_TRUE(std::filesystem::exists(a_)) << "removed a written temp file before its block's commit";
  std::filesystem::rename(a_, a_ + ".final");  // the commit
  temp_.Resolve(id_, {});
  EXPECT_EQ(temp_.tracked(), 0u);
  EXPECT_TRUE(std::filesystem::exists(a_ + ".final"));
}

TEST_F(TempFilesRulesTest, StraysOnOtherPathsGoOnceTheBlockIsCommitted) {
  Touch(a_);
  Touch(b_);
  temp_.Begin(id_);                 // on a: times out
  temp_.Begin(id_);                 // retry on b
  temp_.End(id_, true, b_);         // b written, commit pending
  temp_.End(id_, false, a_);        // a completes late: the block is not quiet yet
  EXPECT_TRUE(std::filesystem::exists(a_));
  std::filesystem::rename(b_, b_ + ".final");
  temp_.Resolve(id_, {});
  EXPECT_FALSE(std::filesystem::exists(a_)) << "the late attempt's temp file on the other path stayed";
  EXPECT_EQ(temp_.tracked(), 0u);
}

TEST_F(TempFilesRulesTest, AnUncommittedBlockLosesTheTempFilesItsShardsWereWrittenTo) {
  Touch(a_);
  temp_.Begin(id_);
  temp_.End(id_, true, a_);
  temp_.Resolve(id_, {a_});  // the block's commit failed
  EXPECT_FALSE(std::filesystem::exists(a_));
  EXPECT_EQ(temp_.tracked(), 0u);
}

TEST_F(TempFilesRulesTest, ShardsWaitingForALaterTaskKeepTheirTempFile) {
  Touch(a_);
  temp_.Begin(id_);
  temp_.End(id_, true, a_);  // shard 0 of a block whose last shard comes in a later task
  temp_.Begin(id_);
  temp_.End(id_, false, b_);  // another attempt of it failed elsewhere
  EXPECT_TRUE(std::filesystem::exists(a_)) << "removed shards still waiting for their block's last shard";
  EXPECT_EQ(temp_.tracked(), 1u);
}

TEST_F(TempFilesRulesTest, ANewAttemptWaitsUntilARemovalOfItsBlocksTempFileEnded) {
  Touch(a_);
  ops_.Add(FaultRule{.op = Op::kUnlink, .prefix = a_, .hang = true, .times = 1});
  temp_.Begin(id_);
  std::thread remover([&] { temp_.End(id_, false, a_); });  // its unlink hangs
  ASSERT_TRUE(Eventually([&] { return ops_.Count(Op::kUnlink, a_) == 1; })) << "the removal never started";
  std::atomic<bool> begun{false};
  std::thread newer([&] {
    temp_.Begin(id_);
    begun = true;
  });
  std::this_thread::sleep_for(100ms);
  const bool begun_during_removal = begun.load();
  ops_.Release();
  remover.join();
  newer.join();
  EXPECT_FALSE(begun_during_removal) << "a new attempt started while the unlink of its temp file was under way";
  EXPECT_FALSE(std::filesystem::exists(a_));
  temp_.End(id_, false, a_);
  EXPECT_EQ(temp_.tracked(), 0u);
}

// ---- Through the PosixStore, on virtual time ------------------------------------------------------
// A write that hangs on one path (a faultfs hang rule on the simulated disk) outlives its 2 s
// attempt timeout; the retry commits the block elsewhere; the hang is released and the late write
// completes. Virtual time makes each of these microseconds, and the same every run.

class TempFilesStoreTest : public ::testing::TestWithParam<IoEngineKind> {
 protected:
  // A store over `disk` with 2 s attempt timeouts, handed to `body` on virtual time.
  void WithStore(sim::VirtualDisk& disk, const std::function<void(PosixStore&)>& body) {
    const std::string stuck = disk.Run([&] {
      PosixStore store(disk.Deps());
      const Status setup = store.Setup(ConfigFor(disk.paths(), GetParam(), 2000));
      ASSERT_TRUE(setup.ok()) << setup.ToString();
      body(store);
    });
    EXPECT_EQ(stuck, "") << "the test's store did not finish";
  }
  // True once the late completions ended: no temp file the store still tracks, none on `path`.
  static bool Quiet(sim::VirtualDisk& disk, PosixStore& store, int path) {
    return sim::WaitUntilHolds(disk.runtime(), [&] {
      return store.tracked_temp_blocks() == 0 && BlockTempFiles(disk.Files(path)).empty();
    });
  }
};

std::string Relative(const std::string& path) { return path.substr(1); }  // BlockPath("", id) starts with '/'

// Separate storages: the primary's temp file stays while its write hangs and goes once the late
// completion arrives; the block is committed on the next path and reads back intact.
TEST_P(TempFilesStoreTest, ALateWriteCompletionRemovesItsTempFile) {
  sim::VirtualDisk disk(2, /*shared=*/false);
  WithStore(disk, [&](PosixStore& store) {
    BlockData block(IdWithPrimary(0, 2), 21);
    ASSERT_TRUE(disk.AddRule(0, "{id: hang, action: hang, ops: [write]}").ok());
    const Status s = DumpAll(store, block);
    const std::vector<std::string> while_hung = BlockTempFiles(disk.Files(0));
    ASSERT_TRUE(disk.RemoveRule(0, "hang").ok());  // the late write completes now
    ASSERT_TRUE(s.ok()) << "the retry on the next path should have saved the block: " << s.ToString();
    EXPECT_EQ(Join(while_hung), Relative(BlockTmpPath("", block.id))) << "while its I/O is pending the temp file must stay";
    const std::vector<std::string> committed = disk.Files(1);
    EXPECT_NE(std::find(committed.begin(), committed.end(), Relative(BlockPath("", block.id))), committed.end())
        << "the retry did not commit on the next path: " << Join(committed);
    EXPECT_TRUE(Quiet(disk, store, 0)) << "the late completion's temp file stayed: " << Join(disk.Files(0));
    EXPECT_TRUE(BlockTempFiles(disk.Files(1)).empty()) << Join(disk.Files(1));
    BlockData loaded(block.id, 0);
    ASSERT_TRUE(LoadAll(store, loaded).ok());
    EXPECT_TRUE(loaded.Equals(block));
  });
}

// Shared storage (two paths to one directory): the late attempt's temp file is the retry's temp
// file by name; the retry committed it. Removing "its" temp file must not touch the block.
TEST_P(TempFilesStoreTest, OnSharedPathsALateWriteLeavesTheCommittedBlockAlone) {
  sim::VirtualDisk disk(2, /*shared=*/true);
  WithStore(disk, [&](PosixStore& store) {
    BlockData block(IdWithPrimary(0, 2), 23);
    ASSERT_TRUE(disk.AddRule(0, "{id: hang, action: hang, ops: [write]}").ok());
    const Status s = DumpAll(store, block);
    ASSERT_TRUE(disk.RemoveRule(0, "hang").ok());
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(Quiet(disk, store, 0)) << Join(disk.Files(0));
    EXPECT_TRUE((*store.Lookup(std::vector<BlockId>{block.id}))[0]) << "the committed block disappeared";
    BlockData loaded(block.id, 0);
    ASSERT_TRUE(LoadAll(store, loaded).ok());
    EXPECT_TRUE(loaded.Equals(block)) << "the late write damaged the committed block";
  });
}

// One path, fixed temp name: the first dump's write times out (it stays pending), a second dump of
// the same block then writes and commits the same temp file; the first one's late completion must
// leave the committed block intact and no temp file behind.
TEST_P(TempFilesStoreTest, ARetryOnTheSamePathKeepsItsFileWhenTheOldAttemptEndsLate) {
  sim::VirtualDisk disk(1, /*shared=*/false);
  WithStore(disk, [&](PosixStore& store) {
    BlockData block(MakeId(24), 24);
    ASSERT_TRUE(disk.AddRule(0, "{id: hang, action: hang, ops: [write], max_hits: 1}").ok());  // the first shard write only
    const Status first = DumpAll(store, block);
    const Status second = DumpAll(store, block);
    ASSERT_TRUE(disk.RemoveRule(0, "hang").ok());
    ASSERT_EQ(first.code(), StatusCode::kTimeout) << "the first dump should time out: " << first.ToString();
    ASSERT_TRUE(second.ok()) << second.ToString();
    EXPECT_TRUE(Quiet(disk, store, 0)) << Join(disk.Files(0));
    BlockData loaded(block.id, 0);
    ASSERT_TRUE(LoadAll(store, loaded).ok());
    EXPECT_TRUE(loaded.Equals(block)) << "the late completion damaged the block the second dump committed";
  });
}

INSTANTIATE_TEST_SUITE_P(Engines, TempFilesStoreTest, ::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio),
                         [](const auto& p) { return p.param == IoEngineKind::kAio ? "aio" : "psync"; });

// A dump that fails after it created its temp files (writes fail on every path; or the writes
// succeed and the commit fails) leaves no temp file behind, on either engine.
class FailedDumpTest : public ::testing::TestWithParam<IoEngineKind> {};

TEST_P(FailedDumpTest, WriteErrorsOnEveryPathLeaveNoTempFile) {
  Backends backends(2, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(GetParam());
  cfg.health.failure_threshold = 8;  // keep both paths available
  ASSERT_TRUE(store.Setup(cfg).ok());
  ops.Add(FaultRule{.op = Op::kWrite, .prefix = backends.root().string(), .err = EIO});
  ops.Add(FaultRule{.op = Op::kFallocate, .prefix = backends.root().string(), .err = EIO});
  BlockData block(IdWithPrimary(0, 2), 25);
  const Status s = DumpAll(store, block);
  ASSERT_FALSE(s.ok()) << "the dump should fail";
  EXPECT_GE(ops.Count(Op::kOpen, backends[0] + "/"), 1) << "the test needs the temp file created";
  EXPECT_TRUE(Eventually([&] { return store.tracked_temp_blocks() == 0; }));
  EXPECT_TRUE(TempFilesUnder(backends.root().string()).empty()) << Join(TempFilesUnder(backends.root().string()));
}

TEST_P(FailedDumpTest, CommitErrorLeavesNoTempFile) {
  Backends backends(2, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(GetParam());
  cfg.health.failure_threshold = 8;
  ASSERT_TRUE(store.Setup(cfg).ok());
  ops.Add(FaultRule{.op = Op::kRename, .prefix = backends.root().string(), .err = EIO});
  BlockData block(IdWithPrimary(0, 2), 26);
  const Status s = DumpAll(store, block);
  ASSERT_FALSE(s.ok()) << "the dump should fail at its commit";
  EXPECT_TRUE(Eventually([&] { return store.tracked_temp_blocks() == 0; }));
  EXPECT_TRUE(TempFilesUnder(backends.root().string()).empty()) << Join(TempFilesUnder(backends.root().string()));
  EXPECT_FALSE((*store.Lookup(std::vector<BlockId>{block.id}))[0]);
}

INSTANTIATE_TEST_SUITE_P(Engines, FailedDumpTest, ::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio),
                         [](const auto& p) { return p.param == IoEngineKind::kAio ? "aio" : "psync"; });

}  // namespace
}  // namespace kvchaos::store
