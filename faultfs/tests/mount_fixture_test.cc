// The test mount helper itself: a test process killed without running any destructor (a ctest
// timeout sends SIGKILL) must not leave its faultfs mounted. On main six faultfs:/tmp/faultfs_shared.*
// mounts stayed behind after such runs.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "faultfs/tests/mount_fixture.h"

namespace kvchaos::faultfs::testing {
namespace {

using namespace std::chrono_literals;

bool Eventually(const std::function<bool()>& cond, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return cond();
}

TEST(MountFixtureTest, AKilledTestProcessLeavesNoMountBehind) {
  if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  // The "test process": mounts through the helper, tells where, then waits to be killed.
  const pid_t test_process = fork();
  ASSERT_GE(test_process, 0);
  if (test_process == 0) {
    close(report[0]);
    auto* mount = new FaultFsMount();  // never destroyed: the process is SIGKILLed
    const Status started = mount->Start();
    const std::string line = started.ok() ? std::to_string(mount->pid()) + " " + mount->mnt() + "\n" : "error\n";
    [[maybe_unused]] const ssize_t n = write(report[1], line.data(), line.size());
    pause();
    _exit(0);
  }
  close(report[1]);
  char buffer[4096] = {};
  size_t got = 0;
  for (ssize_t n; got < sizeof(buffer) - 1 && (n = read(report[0], buffer + got, sizeof(buffer) - 1 - got)) > 0;) {
    got += static_cast<size_t>(n);
    if (std::string(buffer, got).find('\n') != std::string::npos) break;
  }
  close(report[0]);
  const std::string line(buffer, got);
  pid_t faultfs = -1;
  char mnt[4000] = {};
  const bool parsed = std::sscanf(line.c_str(), "%d %3999s", &faultfs, mnt) == 2;
  kill(test_process, SIGKILL);
  waitpid(test_process, nullptr, 0);
  ASSERT_TRUE(parsed) << "the helper could not mount: " << line;
  const std::string mountpoint = mnt;
  const bool unmounted = Eventually([&] { return !IsMountPoint(mountpoint); }, 20s);
  if (!unmounted) {  // tear down what the fix should have: this test must not leave it either
    Shell("fusermount3 -u -z " + mountpoint);
    kill(faultfs, SIGKILL);
  }
  EXPECT_TRUE(unmounted) << "faultfs kept " << mountpoint << " mounted after its test process was killed";
  EXPECT_TRUE(Eventually([&] { return kill(faultfs, 0) != 0 || Shell("grep -q '^State:.*Z' /proc/" + std::to_string(faultfs) + "/status").first == 0; }, 20s))
      << "faultfs (pid " << faultfs << ") still runs";
  std::filesystem::remove_all(std::filesystem::path(mountpoint).parent_path());
}

}  // namespace
}  // namespace kvchaos::faultfs::testing
