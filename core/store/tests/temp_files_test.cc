// Abandoned temp files: TempFiles' rules on their own (remove only while the block is quiet, never
// under a newer attempt, wait for a removal before a new attempt starts), then end to end through
// the PosixStore on real files — a write completing after its timeout (aio through the AioOps seam,
// psync through the FileOps seam) has its temp file removed when its late completion arrives, on
// separate and on shared backends, and a dump that fails after creating its temp file (write error,
// commit error) leaves none behind.
#include "core/store/temp_files.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/holding_aio_ops.h"
#include "core/store/tests/store_test_util.h"
#include "testing/temp_dir.h"

namespace kvchaos::store {
namespace {

using namespace std::chrono_literals;
using testing::BlockData;
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

// ---- Through the PosixStore ----------------------------------------------------------------------

// aio, separate backends: the primary's write completion is held past the attempt timeout; the
// retry commits the block on the next path; when the late completion arrives, the primary's temp
// file goes.
TEST(TempFilesStoreTest, AioLateWriteCompletionRemovesItsTempFile) {
  Backends backends(2, false);
  testing::HoldingAioOps aio;
  BlockData block(IdWithPrimary(0, 2), 21);
  PosixStore store(PosixStoreDeps{.aio_ops = &aio});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, 2000)).ok());
  aio.HoldPrefix(backends[0] + "/", -1);
  const Status s = DumpAll(store, block);
  const bool tmp_while_held = std::filesystem::exists(BlockTmpPath(backends[0], block.id));
  aio.Release();  // before any assertion can return: the store waits for held completions
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_GE(aio.held_total(), 1) << "no completion was held: the test did not exercise a timeout";
  ASSERT_TRUE(std::filesystem::exists(BlockPath(backends[1], block.id))) << "the retry did not commit on the next path";
  EXPECT_TRUE(tmp_while_held) << "while its I/O is in the kernel the temp file must stay";
  EXPECT_TRUE(Eventually([&] { return TempFilesUnder(backends[0]).empty(); }))
      << "the late completion's temp file stayed: " << Join(TempFilesUnder(backends[0]));
  EXPECT_TRUE(Eventually([&] { return store.tracked_temp_blocks() == 0; }));
  EXPECT_TRUE(TempFilesUnder(backends[1]).empty()) << Join(TempFilesUnder(backends[1]));
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(block));
}

// psync, separate backends: the same through a write that hangs in the FileOps seam.
TEST(TempFilesStoreTest, PsyncLateWriteRemovesItsTempFile) {
  Backends backends(2, false);
  FaultFileOps ops;
  BlockData block(IdWithPrimary(0, 2), 22);
  {
    PosixStore store(PosixStoreDeps{.file_ops = &ops});
    ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kPsync, 2000)).ok());
    ops.Add(FaultRule{.op = Op::kWrite, .prefix = backends[0] + "/", .hang = true});
    const Status s = DumpAll(store, block);
    const bool tmp_while_hung = std::filesystem::exists(BlockTmpPath(backends[0], block.id));
    ops.Release();  // before any assertion can return: the store waits for the hung writes
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(tmp_while_hung) << "the hung write's temp file should exist while it hangs";
    EXPECT_TRUE(Eventually([&] { return TempFilesUnder(backends[0]).empty(); }))
        << "the late write's temp file stayed: " << Join(TempFilesUnder(backends[0]));
    EXPECT_TRUE(Eventually([&] { return store.tracked_temp_blocks() == 0; }));
  }
  EXPECT_TRUE(std::filesystem::exists(BlockPath(backends[1], block.id)));
  EXPECT_TRUE(TempFilesUnder(backends[1]).empty()) << Join(TempFilesUnder(backends[1]));
}

// Shared storage (two paths to one directory): the late attempt's temp file is the retry's temp
// file by name; the retry committed it. Removing "its" temp file must not touch the block.
TEST(TempFilesStoreTest, SharedPathsLateWriteLeavesTheCommittedBlockAlone) {
  Backends backends(2, true);
  FaultFileOps ops;
  testing::HoldingAioOps aio([&ops](int fd) { return ops.PathOf(fd); });
  BlockData block(IdWithPrimary(0, 2), 23);
  PosixStore store(PosixStoreDeps{.file_ops = &ops, .aio_ops = &aio});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, 2000)).ok());
  aio.HoldPrefix(backends[0] + "/", -1);
  const Status s = DumpAll(store, block);
  aio.Release();  // before any assertion can return
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_GE(aio.held_total(), 1);
  EXPECT_TRUE(Eventually([&] { return store.tracked_temp_blocks() == 0; }));
  EXPECT_TRUE(TempFilesUnder(backends.root().string()).empty()) << Join(TempFilesUnder(backends.root().string()));
  EXPECT_TRUE((*store.Lookup(std::vector<BlockId>{block.id}))[0]) << "the committed block disappeared";
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(block));
}

// One path, fixed temp name: the first dump's write times out (its I/O stays in the kernel), a
// second dump of the same block then writes and commits the same temp file; the first one's late
// completion must leave the committed block intact and no temp file behind.
TEST(TempFilesStoreTest, RetryOnTheSamePathKeepsItsFileWhenTheOldAttemptEndsLate) {
  Backends backends(1, false);
  testing::HoldingAioOps aio;
  BlockData block(MakeId(24), 24);
  PosixStore store(PosixStoreDeps{.aio_ops = &aio});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, 2000)).ok());
  aio.HoldPrefix(backends[0] + "/", 1);  // the first shard write only
  const Status first = DumpAll(store, block);
  aio.HoldPrefix(backends[0] + "/", 0);
  const Status second = DumpAll(store, block);
  aio.Release();  // before any assertion can return
  ASSERT_EQ(first.code(), StatusCode::kTimeout) << "the first dump should time out: " << first.ToString();
  ASSERT_TRUE(second.ok()) << second.ToString();
  EXPECT_TRUE(Eventually([&] { return store.tracked_temp_blocks() == 0; }));
  EXPECT_TRUE(TempFilesUnder(backends[0]).empty()) << Join(TempFilesUnder(backends[0]));
  BlockData loaded(block.id, 0);
  ASSERT_TRUE(LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(block)) << "the late completion damaged the block the second dump committed";
}

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
