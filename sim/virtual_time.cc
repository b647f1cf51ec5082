#include "sim/virtual_time.h"

namespace kvchaos::sim {

SimRuntimeOptions UnitTestOptions(uint64_t seed) {
  SimRuntimeOptions options;
  options.seed = seed;
  options.buggify = false;
  // A body that never ends (a wait without a bound) must fail the test, not hang it: the join
  // after a failed run gives up after an hour of virtual time.
  options.driver_join_budget_ns = std::chrono::nanoseconds(std::chrono::hours(1)).count();
  return options;
}

std::string RunOnVirtualTime(SimRuntime& runtime, const std::function<void()>& body, Duration limit) {
  if (runtime.node_count() == 0) runtime.AddNode("test");
  bool finished = false;
  Thread thread = runtime.SpawnOn(0, "test", [&] {
    body();
    finished = true;
    runtime.RequestStop();  // threads the body left running must not keep the run going
  });
  const TrueNs end = runtime.true_now() + limit.count();
  while (!finished) {
    const SimRuntime::StopReason reason = runtime.RunUntil(end);
    if (finished) break;
    if (reason == SimRuntime::StopReason::kDeadlock) return "deadlock:\n" + runtime.ThreadReport();
    if (reason == SimRuntime::StopReason::kTimeReached || reason == SimRuntime::StopReason::kAllDone) {
      return "the test body did not finish within " + std::to_string(ToMillis(limit)) + " ms of virtual time:\n" +
             runtime.ThreadReport();
    }
  }
  thread.Join();
  return "";
}

bool WaitUntilHolds(Runtime& runtime, const std::function<bool()>& cond, Duration limit, Duration step) {
  const MonoTime end = runtime.Now() + limit;
  while (!cond()) {
    if (runtime.Now() >= end) return cond();
    runtime.SleepFor(step);
  }
  return true;
}

}  // namespace kvchaos::sim
