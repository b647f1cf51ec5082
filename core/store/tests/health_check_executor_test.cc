// HealthCheckExecutor, the behaviours upstream's executor tests assert (issue 18): a probe's
// status comes back unchanged, a zero timeout answers at once, and the timeout runs from the
// hand-over even while the worker has not started the probe (which then never runs). On virtual
// time, so every "at once" and "exactly at the deadline" is exact.
#include "core/store/health_check_executor.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "core/store/tests/virtual_time_util.h"

namespace kvchaos::store {
namespace {

using namespace std::chrono_literals;
using testing::Gate;
using testing::OnVirtualTime;

// A runtime whose new threads wait at `held()` before they run their function: a worker the
// scheduler has not started yet.
class HeldSpawnRuntime final : public Runtime {
 public:
  explicit HeldSpawnRuntime(Runtime& inner) : inner_(inner), held_(inner) {}
  MonoTime Now() override { return inner_.Now(); }
  WallTime WallNow() override { return inner_.WallNow(); }
  void SleepUntil(MonoTime deadline) override { inner_.SleepUntil(deadline); }
  Thread Spawn(std::string name, std::function<void()> fn) override {
    return inner_.Spawn(std::move(name), [this, fn = std::move(fn)] {
      held_.Wait();
      fn();
    });
  }
  std::unique_ptr<MutexImpl> NewMutex() override { return inner_.NewMutex(); }
  std::unique_ptr<CondVarImpl> NewCondVar() override { return inner_.NewCondVar(); }
  Gate& held() { return held_; }

 private:
  Runtime& inner_;
  Gate held_;
};

TEST(HealthCheckExecutorTest, AFailingProbesStatusComesBackUnchanged) {
  OnVirtualTime([](Runtime& rt) {
    HealthCheckExecutor executor(rt);
    const Status failures[] = {
        Status::IoError("backend '/p0': write('/p0/.probe-7.tmp') failed", EIO),
        Status::NotFound("no such block"),
        Status::StoreUnhealthy("no backend of the store is available"),
    };
    for (const Status& failure : failures) {
      EXPECT_EQ(executor.Run([&] { return failure; }, 1s), failure)
          << "the executor changed the probe's " << failure.ToString();
    }
    EXPECT_EQ(executor.workers_started(), 1) << "a failed probe must not cost a worker";
  });
}

TEST(HealthCheckExecutorTest, AZeroTimeoutAnswersAtOnceAndRunsNothing) {
  OnVirtualTime([](Runtime& rt) {
    HealthCheckExecutor executor(rt);
    bool ran = false;
    const MonoTime start = rt.Now();
    const Status status = executor.Run(
        [&] {
          ran = true;
          rt.SleepFor(10ms);
          return Status::Ok();
        },
        0ms);
    EXPECT_EQ(status.code(), StatusCode::kTimeout) << status.ToString();
    EXPECT_EQ(rt.Now(), start) << "a zero timeout waited for the probe";
    rt.SleepFor(1s);
    EXPECT_FALSE(ran) << "a probe whose answer was already Timeout ran anyway";
    EXPECT_EQ(executor.workers_started(), 0);
  });
}

TEST(HealthCheckExecutorTest, TheTimeoutRunsFromTheHandOverEvenBeforeTheProbeStarts) {
  OnVirtualTime([](Runtime& sim_rt) {
    HeldSpawnRuntime rt(sim_rt);
    HealthCheckExecutor executor(rt);
    bool ran = false;
    const MonoTime start = rt.Now();
    const Status status = executor.Run(
        [&] {
          ran = true;
          return Status::Ok();
        },
        30ms);
    EXPECT_EQ(status.code(), StatusCode::kTimeout) << status.ToString();
    EXPECT_EQ(rt.Now() - start, 30ms) << "a probe whose worker never started must time out at its deadline";
    rt.held().Open();  // the retired worker starts now, after its probe's Run answered
    ASSERT_TRUE(sim::WaitUntilHolds(rt, [&] { return executor.workers_alive() == 0; }))
        << "the retired worker did not exit";
    EXPECT_FALSE(ran) << "a probe already answered with Timeout ran late (and would touch the disk)";
    EXPECT_TRUE(executor.Run([] { return Status::Ok(); }, 1s).ok()) << "the next probe must run on a new worker";
  });
}

}  // namespace
}  // namespace kvchaos::store
