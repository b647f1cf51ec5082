// Startup check: the 4 KiB probe on every backend, each failing operation's message and cleanup,
// direct I/O on and off, and missing backends — through the FileOps seam and real directories.
#include "core/store/probe.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using testing::Backends;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::FilesUnder;
using testing::Op;

struct FailCase {
  Op op;
  const char* op_name;  // as the message must say it
};

class ProbeFailureTest : public ::testing::TestWithParam<FailCase> {};

TEST_P(ProbeFailureTest, FailedOperationIsNamedWithFileAndErrnoAndNothingIsLeft) {
  Backends backends(1, false);
  FaultFileOps ops;
  ops.Add(FaultRule{.op = GetParam().op, .prefix = backends[0], .err = EIO});
  Status s = RunSmallIoProbe(ops, backends[0], /*io_direct=*/false, 0x1234);
  ASSERT_FALSE(s.ok()) << "a failing " << GetParam().op_name << " must fail the probe";
  const std::string text = s.ToString();
  EXPECT_NE(text.find("backend '" + backends[0] + "'"), std::string::npos) << text;
  EXPECT_NE(text.find(std::string(GetParam().op_name) + "('" + ProbeFilePath(backends[0], 0x1234) + "') failed"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Input/output error"), std::string::npos) << "errno text missing: " << text;
  EXPECT_EQ(s.sys_errno(), EIO);
  EXPECT_TRUE(FilesUnder(backends[0]).empty()) << "the probe left files behind after a failed " << GetParam().op_name;
}

// Issue 18 §6: a peer may be writing a block into the probe's shard directory (upstream makes them
// all at setup and never expects one to vanish), so the probe never removes it, even one it made.
TEST(ProbeTest, TheShardDirectoryIsNeverRemoved) {
  Backends backends(1, false);
  const std::string dir = std::filesystem::path(ProbeFilePath(backends[0], 0x1234)).parent_path();
  FaultFileOps ops;
  ASSERT_TRUE(RunSmallIoProbe(ops, backends[0], /*io_direct=*/false, 0x1234).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir)) << "the probe removed the shard directory it made: " << dir;
  ops.Add(FaultRule{.op = Op::kWrite, .prefix = backends[0], .err = EIO});
  EXPECT_FALSE(RunSmallIoProbe(ops, backends[0], false, 0x1234).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir)) << "a failed probe removed the shard directory: " << dir;
  EXPECT_TRUE(FilesUnder(backends[0]).empty());
}

INSTANTIATE_TEST_SUITE_P(EveryStep, ProbeFailureTest,
                         ::testing::Values(FailCase{Op::kOpen, "open"}, FailCase{Op::kWrite, "write"},
                                           FailCase{Op::kFsync, "fsync"}, FailCase{Op::kRead, "read"},
                                           FailCase{Op::kClose, "close"}),
                         [](const auto& param_info) { return std::string(param_info.param.op_name); });

TEST(ProbeTest, CleanupFailureIsReported) {
  Backends backends(1, false);
  FaultFileOps ops;
  ops.Add(FaultRule{.op = Op::kUnlink, .prefix = backends[0], .err = EACCES, .times = 1});
  Status s = RunSmallIoProbe(ops, backends[0], false, 7);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("unlink('" + ProbeFilePath(backends[0], 7) + "') failed"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.ToString().find("Permission denied"), std::string::npos) << s.ToString();
}

TEST(ProbeTest, VerifyMismatchIsReportedWithTheByte) {
  Backends backends(1, false);
  FaultFileOps ops;
  ops.Add(FaultRule{.op = Op::kRead, .prefix = backends[0], .corrupt = true});
  Status s = RunSmallIoProbe(ops, backends[0], false, 9);
  ASSERT_FALSE(s.ok()) << "corrupted read-back must fail the probe";
  EXPECT_NE(s.message().find("verify('" + ProbeFilePath(backends[0], 9) + "') failed: data read back differs at byte 0"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(FilesUnder(backends[0]).empty());
}

TEST(ProbeTest, DirectIoUsesODirectAndSkipsFsync) {
  Backends backends(1, false);
  FaultFileOps ops;
  ASSERT_TRUE(RunSmallIoProbe(ops, backends[0], /*io_direct=*/true, 1).ok());
  ASSERT_EQ(ops.open_flags(backends[0]).size(), 1u);
  EXPECT_NE(ops.open_flags(backends[0])[0] & O_DIRECT, 0) << "io_direct probe must open with O_DIRECT";
  EXPECT_EQ(ops.Count(Op::kFsync, backends[0]), 0) << "direct I/O needs no fsync";
}

TEST(ProbeTest, BufferedIoFsyncsAndDoesNotUseODirect) {
  Backends backends(1, false);
  FaultFileOps ops;
  ASSERT_TRUE(RunSmallIoProbe(ops, backends[0], /*io_direct=*/false, 1).ok());
  ASSERT_EQ(ops.open_flags(backends[0]).size(), 1u);
  EXPECT_EQ(ops.open_flags(backends[0])[0] & O_DIRECT, 0);
  EXPECT_EQ(ops.Count(Op::kFsync, backends[0]), 1) << "buffered probe must fsync before reading back";
  EXPECT_TRUE(FilesUnder(backends[0]).empty());
}

TEST(ProbeTest, SuccessfulProbeLeavesAnExistingShardDirectoryAlone) {
  Backends backends(1, false);
  std::filesystem::create_directories(std::filesystem::path(ProbeFilePath(backends[0], 5)).parent_path());
  ASSERT_TRUE(RunSmallIoProbe(FileOps::Real(), backends[0], false, 5).ok());
  EXPECT_TRUE(std::filesystem::is_directory(std::filesystem::path(ProbeFilePath(backends[0], 5)).parent_path()))
      << "a shard directory the probe did not create must stay";
}

TEST(StartupCheckTest, FirstBackendMissingAbortsSetup) {
  Backends backends(3, false);
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.storage_backends[0] = (backends.root() / "missing").string();
  PosixStore store;
  Status s = store.Setup(cfg);
  ASSERT_FALSE(s.ok()) << "a missing data directory must abort startup";
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.ToString().find("backend '" + cfg.storage_backends[0] + "'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("No such file or directory"), std::string::npos) << s.ToString();
  EXPECT_EQ(store.CheckHealth().code(), StatusCode::kStoreUnhealthy);
}

TEST(StartupCheckTest, LaterBackendMissingAbortsSetupAndLeavesNothingOnTheOthers) {
  Backends backends(3, false);
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.storage_backends[2] = (backends.root() / "gone").string();
  PosixStore store;
  Status s = store.Setup(cfg);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("gone"), std::string::npos) << s.ToString();
  // Their files; a probe's shard directory stays (a peer may use it).
  EXPECT_TRUE(FilesUnder(backends[0]).empty()) << "the probes of healthy backends must clean up";
  EXPECT_TRUE(FilesUnder(backends[1]).empty());
  EXPECT_EQ(testing::ThreadsNamed("ucm_health_pmon"), 0) << "no monitor may start when the startup check failed";
}

TEST(StartupCheckTest, WriteFailureOnOneBackendAbortsSetupWithTheOperation) {
  Backends backends(2, false);
  FaultFileOps ops;
  ops.Add(FaultRule{.op = Op::kWrite, .prefix = backends[1], .err = ENOSPC});
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  Status s = store.Setup(backends.Config(IoEngineKind::kPsync));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("store setup: startup check failed: backend '" + backends[1] + "': write('"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.ToString().find("No space left on device"), std::string::npos) << s.ToString();
}

TEST(StartupCheckTest, EveryBackendIsProbedWithRealIo) {
  Backends backends(3, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kPsync)).ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ops.Count(Op::kWrite, backends[i]), 1) << "backend " << i << " was not written at startup";
    EXPECT_EQ(ops.Count(Op::kRead, backends[i]), 1) << "backend " << i << " was not read back at startup";
    EXPECT_TRUE(FilesUnder(backends[i]).empty());
  }
}

}  // namespace
}  // namespace kvchaos::store
