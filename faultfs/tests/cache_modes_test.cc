// What each --cache mode means for which faults an application sees, over real mounts: `none`
// sends every read to faultfs (a rule added while a file is open hits its next read),
// `targeted` lets the page cache serve files no rule targets but not the targeted ones, and
// `always` moves write errors to fsync.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "faultfs/tests/mount_fixture.h"

namespace kvchaos::faultfs::testing {
namespace {

using nlohmann::json;

class CacheModeTest : public ::testing::Test {
 protected:
  void Mount(const std::string& cache) {
    if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
    MountOptions options;
    options.cache = cache;
    Status s = fs_.Start(options);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Read calls that reached faultfs so far.
  uint64_t ReadCalls() {
    auto stats = fs_.Ctl({{"cmd", "stats"}});
    EXPECT_TRUE(stats.ok());
    if (!stats.ok() || !(*stats)["ops"].contains("read")) return 0;
    return (*stats)["ops"]["read"]["calls"].get<uint64_t>();
  }
  // Reads the first bytes of an open file; the byte count or -errno.
  static ssize_t PreadAt0(int fd) {
    char buf[64];
    const ssize_t n = pread(fd, buf, sizeof(buf), 0);
    return n < 0 ? -errno : n;
  }
  FaultFsMount fs_;
};

TEST_F(CacheModeTest, NoneSendsEveryReadThroughSoALateRuleHitsAnOpenFile) {
  Mount("none");
  WriteFile(fs_.src("f"), "0123456789");
  const int fd = open(fs_.at("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(PreadAt0(fd), 10);
  ASSERT_TRUE(fs_.AddRule({{"id", "e"}, {"path", "f"}, {"ops", {"read"}}, {"action", "errno"}}).ok());
  EXPECT_EQ(PreadAt0(fd), -EIO) << "in mode none a rule added after open must reach the next read";
  close(fd);
}

TEST_F(CacheModeTest, TargetedCachesOnlyFilesNoRuleTargets) {
  Mount("targeted");
  WriteFile(fs_.src("plain"), "plain data");
  WriteFile(fs_.src("target"), "target data");
  // A rule whose glob names the file makes its opens direct, whatever ops the rule fails.
  ASSERT_TRUE(fs_.AddRule({{"id", "t"}, {"path", "target"}, {"ops", {"fsync"}}, {"action", "errno"}}).ok());
  for (const char* name : {"plain", "target"}) {
    const int fd = open(fs_.at(name).c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << name;
    ASSERT_GT(PreadAt0(fd), 0) << name;
    const uint64_t before = ReadCalls();
    ASSERT_GT(PreadAt0(fd), 0) << name;
    const uint64_t after = ReadCalls();
    if (std::string(name) == "plain") {
      EXPECT_EQ(after, before) << "a repeat read of an untargeted file should come from the page cache";
    } else {
      EXPECT_GT(after, before) << "every read of a targeted file must reach faultfs";
    }
    close(fd);
  }
}

TEST_F(CacheModeTest, AlwaysMovesWriteErrorsToFsync) {
  Mount("always");
  ASSERT_TRUE(fs_.AddRule({{"id", "w"}, {"path", "w"}, {"ops", {"write"}}, {"action", "errno"}}).ok());
  const int fd = open(fs_.at("w").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(write(fd, "cached", 6), 6) << "with the writeback cache a write lands in the page cache first";
  EXPECT_EQ(fsync(fd), -1) << "the failed write-back must surface at fsync";
  EXPECT_EQ(errno, EIO);
  close(fd);
}

}  // namespace
}  // namespace kvchaos::faultfs::testing
