// faultfs as users start it: without -f, from a shell, with relative paths. The command returns
// once mounted and a daemon serves the mount; it must pass files through, take rules from
// `faultfs ctl`, and exit by itself on `fusermount3 -u`. Input errors must reach the shell as exit
// status 2 before the fork, since the daemon's stderr is /dev/null.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <sstream>
#include <thread>

#include "faultfs/tests/mount_fixture.h"
#include "testing/temp_dir.h"

namespace kvchaos::faultfs::testing {
namespace {

using ::testing::HasSubstr;

// The faultfs daemon among this process's children (it is reparented here, see DaemonMount).
// Not the control socket's peer credentials: those name the process that called listen(), the
// parent that forked and exited.
pid_t DaemonChild() {
  const std::string self = std::to_string(getpid());
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::istringstream stat(ReadFile("/proc/" + pid + "/stat"));
    std::string field, ppid;
    // pid (comm) state ppid: comm has no spaces here (the binary is "faultfs").
    stat >> field >> field >> field >> ppid;
    if (ppid != self) continue;
    const std::string cmdline = ReadFile("/proc/" + pid + "/cmdline");
    if (cmdline.rfind(KVCHAOS_FAULTFS_BINARY, 0) == 0) return static_cast<pid_t>(std::stol(pid));
  }
  return -1;
}

// Reads a whole file through the mount; the errno of the first failing call, 0 when it read.
int ReadThrough(const std::string& path, std::string* out) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return errno;
  char buf[4096];
  ssize_t n;
  out->clear();
  while ((n = read(fd, buf, sizeof(buf))) > 0) out->append(buf, static_cast<size_t>(n));
  const int err = n < 0 ? errno : 0;
  close(fd);
  return err;
}

// A daemonized faultfs in a temp dir. The test process is a child subreaper while it lives, so
// the daemon (orphaned by its parent's exit) is reparented here and its exit status can be read.
// The destructor unmounts and kills whatever is left, whatever the test's outcome.
class DaemonMount {
 public:
  DaemonMount() : dir_("faultfs-daemon") {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    mkdir(path("src").c_str(), 0755);
    mkdir(path("mnt").c_str(), 0755);
  }
  ~DaemonMount() {
    if (IsMountPoint(path("mnt"))) Shell("fusermount3 -u -z " + path("mnt"));
    if (pid_ > 0 && WaitExited(std::chrono::seconds(5)) == -1) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
  }
  std::string path(const std::string& rel) const { return dir_.str() + "/" + rel; }
  // Runs `args` in the temp dir, as a user would type it there.
  std::pair<int, std::string> Run(const std::string& args) const {
    return Shell("cd " + dir_.str() + " && " + KVCHAOS_FAULTFS_BINARY + " " + args);
  }
  void set_pid(pid_t pid) { pid_ = pid; }
  // The daemon's exit status, or -1 when it is still running after `timeout`.
  int WaitExited(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

 private:
  kvchaos::testing::TempDir dir_;
  pid_t pid_ = -1;
};

TEST(DaemonModeTest, MountReadWriteFaultAndUnmountWithoutForeground) {
  if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
  DaemonMount d;
  WriteFile(d.path("src/hello.txt"), "hello\n");
  WriteFile(d.path("rules.yaml"), "seed: 7\nrules:\n  - id: from-file\n    path: never-matches\n    action: errno\n");

  auto [rc, out] = d.Run("src mnt --control ctl.sock --log faults.jsonl --rules rules.yaml");
  ASSERT_EQ(rc, 0) << out;
  ASSERT_TRUE(IsMountPoint(d.path("mnt"))) << "faultfs returned before mounting: " << out;
  const pid_t daemon = DaemonChild();
  ASSERT_GT(daemon, 0) << "no faultfs daemon left running after the command returned";
  d.set_pid(daemon);

  std::string data;
  ASSERT_EQ(ReadThrough(d.path("mnt/hello.txt"), &data), 0) << "the daemon must pass reads through";
  EXPECT_EQ(data, "hello\n");
  WriteFile(d.path("mnt/new.txt"), "written through the daemon");
  EXPECT_EQ(ReadFile(d.path("src/new.txt")), "written through the daemon") << "the daemon must pass writes through";

  std::tie(rc, out) = d.Run("ctl ctl.sock list");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("\"id\":\"from-file\"")) << "the rules file given as a relative path";
  std::tie(rc, out) =
      d.Run(R"(ctl ctl.sock add '{"id":"eio","path":"hello.txt","ops":["read"],"action":"errno","errno":"EIO"}')");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(ReadThrough(d.path("mnt/hello.txt"), &data), EIO) << "the EIO rule added through faultfs ctl";
  std::tie(rc, out) = d.Run("ctl ctl.sock stats");
  EXPECT_THAT(out, HasSubstr("\"faults\":1")) << out;
  EXPECT_THAT(ReadFile(d.path("faults.jsonl")), HasSubstr("\"rule\":\"eio\""))
      << "the fault log given as a relative path";

  std::tie(rc, out) = Shell("fusermount3 -u " + d.path("mnt"));
  ASSERT_EQ(rc, 0) << out;
  const int status = d.WaitExited(std::chrono::seconds(10));
  ASSERT_NE(status, -1) << "the daemon kept running after fusermount3 -u";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "daemon exit status " << status;
  EXPECT_FALSE(IsMountPoint(d.path("mnt")));
  struct stat st {};
  EXPECT_NE(lstat(d.path("ctl.sock").c_str(), &st), 0) << "the daemon must remove its control socket";
  EXPECT_EQ(ReadFile(d.path("src/hello.txt")), "hello\n") << "the source is untouched";
}

TEST(DaemonModeTest, ControlSocketErrorReachesTheShellBeforeTheFork) {
  if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
  DaemonMount d;
  auto [rc, out] = d.Run("src mnt --control no-such-dir/ctl.sock");
  EXPECT_EQ(rc, 2) << "a daemon that cannot listen must not report success: " << out;
  EXPECT_THAT(out, HasSubstr("cannot listen on control socket"));
  EXPECT_FALSE(IsMountPoint(d.path("mnt"))) << "nothing stays mounted after the error";
}

}  // namespace
}  // namespace kvchaos::faultfs::testing
