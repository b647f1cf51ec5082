// Helpers of the store tests that run on virtual time: a gate a probe can wait on, and a runner
// that fails the test when its body does not finish (deadlock, or an hour of virtual time).
#pragma once

#include <gtest/gtest.h>

#include <functional>

#include "core/common/runtime.h"
#include "sim/virtual_time.h"

namespace kvchaos::store::testing {

// A gate a probe can wait on, on the test's runtime.
struct Gate {
  explicit Gate(Runtime& runtime) : mu(runtime), cv(runtime) {}
  void Wait() {
    MutexLock lock(mu);
    while (!open) cv.Wait(mu);
  }
  void Open() {
    MutexLock lock(mu);
    open = true;
    cv.NotifyAll();
  }
  Mutex mu;
  CondVar cv;
  bool open GUARDED_BY(mu) = false;
};

// Runs `body` on virtual time; fails the test if it did not finish.
inline void OnVirtualTime(const std::function<void(Runtime&)>& body) {
  sim::SimRuntime runtime(sim::UnitTestOptions());
  EXPECT_EQ(sim::RunOnVirtualTime(runtime, [&] { body(runtime); }), "");
}

}  // namespace kvchaos::store::testing
