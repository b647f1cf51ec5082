// HealthBreakerStore: trips on failed health polls (including polls that hang), refuses new work
// fast while open, lets in-flight tasks finish, closes after a full healthy window, and does
// nothing at all when store_health.enabled is false.
#include "core/store/health_breaker_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "core/store/tests/log_capture.h"
#include "core/store/tests/store_test_util.h"
#include "core/store/tests/virtual_time_util.h"

namespace kvchaos::store {
namespace {

using namespace std::chrono_literals;
using testing::Eventually;

// A store whose health the test sets, counting calls that reach it.
class FakeStore final : public Store {
 public:
  std::atomic<bool> healthy{true};
  std::atomic<bool> hang_checks{false};
  std::atomic<int> dumps{0}, loads{0}, lookups{0}, waits{0}, checks{0}, removes{0};
  std::function<void()> before_check;  // runs first in every CheckHealth (set before polling starts)
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;

  Result<std::vector<bool>> Lookup(std::span<const BlockId> ids) override {
    ++lookups;
    return std::vector<bool>(ids.size(), true);
  }
  Result<TaskHandle> Dump(TransferTask) override { return static_cast<TaskHandle>(++dumps); }
  Result<TaskHandle> Load(TransferTask) override { return static_cast<TaskHandle>(++loads); }
  Status Wait(TaskHandle) override {
    ++waits;
    return Status::Ok();
  }
  Status CheckHealth() override {
    ++checks;
    if (before_check) before_check();
    if (hang_checks) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return release; });
    }
    return healthy ? Status::Ok() : Status::StoreUnhealthy("fake: no backend");
  }
  Status Remove(std::span<const BlockId>) override {
    ++removes;
    return Status::Ok();
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
    cv.notify_all();
  }
};

StoreHealthConfig FastHealth() {
  StoreHealthConfig h;
  h.health_check_interval_s = 0.005;
  h.health_check_timeout_s = 0.004;
  h.health_window_size = 4;
  h.failure_threshold = 2;
  return h;
}

TEST(HealthBreakerStoreTest, OpensOnFailedPollsRefusesNewWorkAndLetsInFlightFinish) {
  FakeStore inner;
  StoreHealthConfig h = FastHealth();
  h.health_check_timeout_s = 0.5;  // polls answer at once here; no timeouts wanted
  h.health_check_interval_s = 0.51;
  HealthBreakerStore breaker(Runtime::Real(), inner, h);
  Result<TaskHandle> in_flight = breaker.Load(TransferTask{});
  ASSERT_TRUE(in_flight.ok());
  inner.healthy = false;
  ASSERT_TRUE(Eventually([&] { return breaker.tripped(); }, 5s)) << "two failed polls must open the breaker";
  const int dumps = inner.dumps, loads = inner.loads, lookups = inner.lookups;
  EXPECT_EQ(breaker.Dump(TransferTask{}).status().code(), StatusCode::kStoreUnhealthy);
  EXPECT_EQ(breaker.Load(TransferTask{}).status().code(), StatusCode::kStoreUnhealthy);
  Result<std::vector<bool>> found = breaker.Lookup(std::vector<BlockId>{BlockId{}, BlockId{}});
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, (std::vector<bool>{false, false})) << "an open breaker reports misses";
  EXPECT_EQ(inner.dumps, dumps);
  EXPECT_EQ(inner.loads, loads);
  EXPECT_EQ(inner.lookups, lookups) << "an open breaker must not reach the store";
  EXPECT_EQ(breaker.CheckHealth().code(), StatusCode::kStoreUnhealthy);
  EXPECT_TRUE(breaker.Wait(*in_flight).ok()) << "a task started before the trip must still complete";
}

TEST(HealthBreakerStoreTest, ClosesAfterAFullWindowOfHealthyPolls) {
  FakeStore inner;
  StoreHealthConfig h = FastHealth();
  h.health_check_interval_s = 0.02;
  h.health_check_timeout_s = 0.015;
  HealthBreakerStore breaker(Runtime::Real(), inner, h);
  inner.healthy = false;
  ASSERT_TRUE(Eventually([&] { return breaker.tripped(); }, 5s));
  const int polls_at_trip = breaker.polls();
  inner.healthy = true;
  ASSERT_TRUE(Eventually([&] { return !breaker.tripped(); }, 5s));
  // A poll already counted when the store healed may still answer healthy: one of the window's
  // four may come before polls_at_trip.
  EXPECT_GE(breaker.polls() - polls_at_trip, 3) << "closing needs a full window (4) of healthy polls";
  EXPECT_TRUE(breaker.Dump(TransferTask{}).ok());
}

TEST(HealthBreakerStoreTest, APollThatHangsCountsAsAFailure) {
  FakeStore inner;
  inner.hang_checks = true;
  {
    HealthBreakerStore breaker(Runtime::Real(), inner, FastHealth());
    EXPECT_TRUE(Eventually([&] { return breaker.tripped(); }, 5s)) << "polls that never answer must open the breaker";
    inner.Release();
  }
}

// A store whose CheckHealth never answers must not cost a thread per poll forever: past 64 stuck
// polls, a poll fails at once without reaching the store (and still counts as a failure).
TEST(HealthBreakerStoreTest, AtMost64PollsAreStuckAtOnce) {
  FakeStore inner;
  inner.hang_checks = true;
  {
    HealthBreakerStore breaker(Runtime::Real(), inner, FastHealth());
    // A poll that times out before its worker starts never reaches the store, so on a loaded
    // machine more than 64 polls may be needed to fill the cap: wait for it, then for 10 more.
    const bool filled = Eventually([&] { return inner.checks.load() >= HealthBreakerStore::kMaxChecksInFlight; }, 20s);
    const int polls_when_filled = breaker.polls();
    const bool enough = Eventually([&] { return breaker.polls() >= polls_when_filled + 10; }, 20s);
    const int reached = inner.checks.load();
    const bool tripped = breaker.tripped();
    inner.Release();
    ASSERT_TRUE(filled) << "only " << reached << " polls reached the store in 20 s";
    ASSERT_TRUE(enough) << "the breaker stopped polling after " << breaker.polls() << " polls";
    EXPECT_EQ(reached, HealthBreakerStore::kMaxChecksInFlight) << "stuck polls must be capped at 64";
    EXPECT_TRUE(tripped);
  }
}

TEST(HealthBreakerStoreTest, DisabledBreakerPassesEverythingThroughAndRunsNoThread) {
  FakeStore inner;
  inner.healthy = false;
  StoreHealthConfig h = FastHealth();
  h.enabled = false;
  const int before = testing::ThreadsNamed("ucm_health_mon");
  HealthBreakerStore breaker(Runtime::Real(), inner, h);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(testing::ThreadsNamed("ucm_health_mon"), before);
  EXPECT_FALSE(breaker.tripped());
  EXPECT_TRUE(breaker.Dump(TransferTask{}).ok());
  EXPECT_EQ(breaker.CheckHealth().code(), StatusCode::kStoreUnhealthy) << "health still comes from the inner store";
}

// Upstream's ProbeIntervalIncludesHealthCheckTime, for the outer breaker's polls.
TEST(HealthBreakerStoreTest, ThePollIntervalIncludesThePollsOwnTime) {
  testing::OnVirtualTime([](Runtime& rt) {
    FakeStore inner;
    std::vector<MonoTime> starts;
    inner.before_check = [&] {
      starts.push_back(rt.Now());
      rt.SleepFor(80ms);
    };
    StoreHealthConfig h = FastHealth();
    h.health_check_interval_s = 0.1;
    h.health_check_timeout_s = 0.09;
    HealthBreakerStore breaker(rt, inner, h);
    ASSERT_TRUE(sim::WaitUntilHolds(rt, [&] { return starts.size() >= 4; }));
    for (size_t i = 1; i < starts.size(); ++i) {
      EXPECT_EQ(starts[i] - starts[i - 1], 100ms)
          << "poll " << i << " started " << ToMillis(starts[i] - starts[i - 1])
          << " ms after the one before: the interval must include the poll's own 80 ms";
    }
  });
}

TEST(HealthBreakerStoreTest, EveryTransitionAndEveryFailedPollIsLoggedWithItsStatus) {
  testing::LogCapture log;
  testing::OnVirtualTime([](Runtime& rt) {
    FakeStore inner;
    inner.healthy = false;
    inner.before_check = [&] { inner.healthy = inner.checks > 2; };  // two failed polls, then healthy
    HealthBreakerStore breaker(rt, inner, FastHealth());
    ASSERT_TRUE(sim::WaitUntilHolds(rt, [&] { return breaker.tripped(); }));
    ASSERT_TRUE(sim::WaitUntilHolds(rt, [&] { return !breaker.tripped(); }));
  });
  // At warning or info: the default level (info) shows them.
  EXPECT_EQ(log.Lines({"warning", "store breaker open"}), 1) << log.text();
  EXPECT_EQ(log.Lines({"info", "store breaker closed"}), 1) << log.text();
  EXPECT_EQ(log.Lines({"warning", "store health check failed", "StoreUnhealthy", "fake: no backend"}), 2)
      << "each failed poll needs its own line with its status:\n" << log.text();
}

TEST(HealthBreakerStoreTest, HealthyOperationsPassTheEnabledBreakerWithoutTouchingItsWindow) {
  testing::OnVirtualTime([](Runtime& rt) {
    FakeStore inner;
    StoreHealthConfig h = FastHealth();
    h.health_check_interval_s = 3600;  // one poll, at the start
    h.health_check_timeout_s = 1;
    HealthBreakerStore breaker(rt, inner, h);
    ASSERT_TRUE(sim::WaitUntilHolds(rt, [&] { return breaker.polls() == 1; }));
    const int count = breaker.window().count(), failures = breaker.window().failures();
    const std::vector<BlockId> ids{testing::MakeId(1)};
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(breaker.Lookup(ids).ok());
      Result<TaskHandle> dump = breaker.Dump(TransferTask{});
      ASSERT_TRUE(dump.ok());
      ASSERT_TRUE(breaker.Wait(*dump).ok());
      ASSERT_TRUE(breaker.Load(TransferTask{}).ok());
      ASSERT_TRUE(breaker.Remove(ids).ok());
      ASSERT_TRUE(breaker.CheckHealth().ok());
    }
    EXPECT_EQ(inner.lookups, 10);
    EXPECT_EQ(inner.dumps, 10);
    EXPECT_EQ(inner.loads, 10);
    EXPECT_EQ(inner.waits, 10);
    EXPECT_EQ(inner.removes, 10);
    EXPECT_EQ(inner.checks, 11) << "CheckHealth passes through (10) besides the one poll";
    EXPECT_EQ(breaker.window().count(), count) << "healthy operations added samples to the breaker's window";
    EXPECT_EQ(breaker.window().failures(), failures);
    EXPECT_FALSE(breaker.tripped());
  });
}

TEST(HealthBreakerStoreTest, AnEnabledBreakerRunsExactlyOneMonitorThread) {
  FakeStore inner;
  StoreHealthConfig h = FastHealth();
  const int before = testing::ThreadsNamed("ucm_health_mon");
  {
    HealthBreakerStore breaker(Runtime::Real(), inner, h);
    // The thread names itself once it runs; then it must stay the only one, poll after poll.
    ASSERT_TRUE(Eventually([&] { return testing::ThreadsNamed("ucm_health_mon") == before + 1; }));
    ASSERT_TRUE(Eventually([&] { return breaker.polls() >= 20; }));
    EXPECT_EQ(testing::ThreadsNamed("ucm_health_mon"), before + 1) << "polls started monitor threads of their own";
  }
  EXPECT_TRUE(Eventually([&] { return testing::ThreadsNamed("ucm_health_mon") == before; }))
      << "the monitor thread outlived its breaker";
}

}  // namespace
}  // namespace kvchaos::store
