#include "core/common/real_runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

namespace kvchaos {
namespace {

using namespace std::chrono_literals;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

TEST(RealRuntimeTest, NowIsMonotonicAndSleepWaits) {
  Runtime& rt = Runtime::Real();
  const MonoTime start = rt.Now();
  rt.SleepFor(20ms);
  EXPECT_GE(rt.Now() - start, 20ms);
  EXPECT_GT(rt.WallNow().time_since_epoch().count(), 0);
}

TEST(RealRuntimeTest, CondVarWaitUntilTimesOutWithoutNotify) {
  Runtime& rt = Runtime::Real();
  Mutex mu(rt);
  CondVar cv(rt);
  MutexLock lock(mu);
  const MonoTime deadline = rt.Now() + 30ms;
  bool ready = false;
  EXPECT_FALSE(cv.WaitUntil(mu, deadline, [&] { return ready; })) << "nobody notified: the wait must time out";
  EXPECT_GE(rt.Now(), deadline);
}

TEST(RealRuntimeTest, CondVarWakesOnNotifyBeforeDeadline) {
  Runtime& rt = Runtime::Real();
  Mutex mu(rt);
  CondVar cv(rt);
  bool ready = false;
  Thread notifier = rt.Spawn("kvc_test_notify", [&] {
    rt.SleepFor(10ms);
    MutexLock lock(mu);
    ready = true;
    cv.NotifyAll();
  });
  const MonoTime start = rt.Now();
  {
    MutexLock lock(mu);
    EXPECT_TRUE(cv.WaitUntil(mu, rt.Now() + 10s, [&] { return ready; }));
  }
  EXPECT_LT(rt.Now() - start, 5s) << "the notify should have woken the waiter long before the deadline";
  notifier.Join();
}

TEST(RealRuntimeTest, SpawnedThreadNamesAreVisibleInProc) {
  Runtime& rt = Runtime::Real();
  Mutex mu(rt);
  CondVar cv(rt);
  bool named = false;
  bool release = false;
  pid_t tid = 0;
  Thread t = rt.Spawn("kvc_lease_check_and_more", [&] {
    MutexLock lock(mu);
    tid = gettid();
    named = true;
    cv.NotifyAll();
    cv.Wait(mu, [&] { return release; });
  });
  {
    MutexLock lock(mu);
    cv.Wait(mu, [&] { return named; });
  }
  const std::string comm = ReadFile("/proc/self/task/" + std::to_string(tid) + "/comm");
  EXPECT_EQ(comm, "kvc_lease_check") << "the name is cut to Linux's 15 characters";
  {
    MutexLock lock(mu);
    release = true;
    cv.NotifyAll();
  }
  t.Join();
  EXPECT_FALSE(t.joinable());
}

TEST(RealRuntimeTest, ThreadJoinsInDestructorAndNeverBuggifies) {
  Runtime& rt = Runtime::Real();
  std::atomic<bool> ran{false};
  { Thread t = rt.Spawn("kvc_test_join", [&] { ran = true; }); }
  EXPECT_TRUE(ran.load());
  EXPECT_FALSE(rt.Buggify("any_site"));
}

}  // namespace
}  // namespace kvchaos
