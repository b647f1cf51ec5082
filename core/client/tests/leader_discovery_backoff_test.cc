// Retry backoff of LeaderDiscovery: the cap doubles from initial_backoff_ms up to max_backoff_ms,
// every wait is a full-jitter draw in [0, cap] that goes through the Runtime, a seed gives the same
// waits again, and different seeds spread clients out.
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <vector>

#include "core/client/leader_discovery.h"
#include "core/common/runtime.h"
#include "testing/free_port.h"

namespace kvchaos::client {
namespace {

// The real runtime, except that sleeps return at once and are recorded (time jumps ahead).
class SleepRecorder final : public Runtime {
 public:
  MonoTime Now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  WallTime WallNow() override { return Runtime::Real().WallNow(); }
  void SleepUntil(MonoTime deadline) override {
    std::lock_guard<std::mutex> lock(mu_);
    sleeps_.push_back(deadline - now_);
    now_ = std::max(now_, deadline);
  }
  Thread Spawn(std::string name, std::function<void()> fn) override {
    return Runtime::Real().Spawn(std::move(name), std::move(fn));
  }
  std::unique_ptr<MutexImpl> NewMutex() override { return Runtime::Real().NewMutex(); }
  std::unique_ptr<CondVarImpl> NewCondVar() override { return Runtime::Real().NewCondVar(); }
  std::vector<int64_t> SleepsMs() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int64_t> out;
    for (Duration d : sleeps_) out.push_back(ToMillis(d));
    return out;
  }

 private:
  std::mutex mu_;
  MonoTime now_ = MonoTime(std::chrono::hours(1));
  std::vector<Duration> sleeps_;
};

TEST(LeaderDiscoveryBackoffTest, TheCapDoublesUpToTheMaximumWithoutOverflow) {
  LeaderDiscoveryOptions o;
  o.initial_backoff_ms = 20;
  o.max_backoff_ms = 1000;
  std::vector<int64_t> caps;
  for (int retry = 1; retry <= 8; ++retry) caps.push_back(BackoffCapMs(o, retry));
  EXPECT_EQ(caps, (std::vector<int64_t>{20, 40, 80, 160, 320, 640, 1000, 1000}));
  EXPECT_EQ(BackoffCapMs(o, 1000), 1000) << "a long retry series must stay at the maximum";
  o.max_backoff_ms = INT64_MAX;
  EXPECT_GT(BackoffCapMs(o, 200), 0) << "doubling must not overflow";
}

// Calls a node that is not there: every attempt fails, so every gap between attempts is a backoff.
std::vector<int64_t> WaitsAgainstNobody(std::optional<uint64_t> seed, int attempts) {
  SleepRecorder rt;
  LeaderDiscoveryOptions o;
  o.bootstrap = {"127.0.0.1:" + std::to_string(kvchaos::testing::PickFreeLoopbackPort())};
  o.max_attempts = attempts;
  o.initial_backoff_ms = 20;
  o.max_backoff_ms = 400;
  o.request_timeout_ms = 500;
  o.backoff_seed = seed;
  LeaderDiscovery discovery(rt, o);
  auto answer = discovery.CallLeader("GetCacheLocation", {{"keys", {"k"}}});
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable) << answer.status().ToString();
  EXPECT_NE(answer.status().message().find("after " + std::to_string(attempts) + " attempts"), std::string::npos)
      << answer.status().ToString();
  return rt.SleepsMs();
}

TEST(LeaderDiscoveryBackoffTest, EveryWaitIsAFullJitterDrawWithinItsCap) {
  const int attempts = 12;
  std::vector<int64_t> waits = WaitsAgainstNobody(42, attempts);
  ASSERT_EQ(waits.size(), static_cast<size_t>(attempts - 1)) << "one wait between two attempts, through the Runtime";
  LeaderDiscoveryOptions o;
  o.initial_backoff_ms = 20;
  o.max_backoff_ms = 400;
  bool below_cap = false;
  for (size_t i = 0; i < waits.size(); ++i) {
    const int64_t cap = BackoffCapMs(o, static_cast<int>(i) + 1);
    EXPECT_GE(waits[i], 0) << "wait " << i;
    EXPECT_LE(waits[i], cap) << "wait " << i << " exceeds its cap " << cap;
    below_cap = below_cap || waits[i] < cap;
  }
  EXPECT_TRUE(below_cap) << "no wait was jittered: all sat at the cap";
}

TEST(LeaderDiscoveryBackoffTest, ASeedRepeatsItsWaitsAndSeedsDiffer) {
  std::vector<int64_t> a = WaitsAgainstNobody(7, 10);
  std::vector<int64_t> again = WaitsAgainstNobody(7, 10);
  std::vector<int64_t> other = WaitsAgainstNobody(8, 10);
  EXPECT_EQ(a, again) << "the same seed must give the same retry waits";
  EXPECT_NE(a, other) << "two clients with different seeds retried in lockstep";
  SleepRecorder rt;
  LeaderDiscoveryOptions seeded;
  seeded.backoff_seed = 99;
  EXPECT_EQ(LeaderDiscovery(rt, seeded).backoff_seed(), 99u) << "a configured seed is used as given";
}

TEST(LeaderDiscoveryBackoffTest, BadBackoffSettingsAreRefused) {
  SleepRecorder rt;
  LeaderDiscoveryOptions o;
  o.bootstrap = {"127.0.0.1:1"};
  o.initial_backoff_ms = 500;
  o.max_backoff_ms = 100;
  LeaderDiscovery discovery(rt, o);
  auto answer = discovery.CallLeader("GetCacheLocation", {{"keys", {"k"}}});
  EXPECT_EQ(answer.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(answer.status().message().find("initial_backoff_ms <= max_backoff_ms"), std::string::npos)
      << answer.status().ToString();
  EXPECT_TRUE(rt.SleepsMs().empty()) << "nothing is tried with bad settings";
}

}  // namespace
}  // namespace kvchaos::client
