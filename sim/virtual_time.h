// Virtual time for unit tests of core modules: the code under test gets a SimRuntime instead of
// Runtime::Real(), so a test of a 2 s attempt timeout, a lease or a probe interval runs in
// microseconds of host time, never flakes on a loaded machine, and its thread interleavings come
// from the seed. What it cannot test is the operating system itself (kernel AIO, real files,
// thread names in /proc): such tests stay on the real runtime.
#pragma once

#include <functional>
#include <string>

#include "core/common/runtime.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

// Options for unit tests: no buggify (the code's rare paths are for the simulator's seeds), and a
// driver join that gives up after an hour of virtual time.
SimRuntimeOptions UnitTestOptions(uint64_t seed = 1);

// Runs `body` on a simulated thread of `runtime` (its node 0, added if it has none) until the
// body returns. Threads the body started may go on; they are stopped when the runtime goes.
// Returns "" when the body finished, else why not (a deadlock or the time limit) with every
// unfinished thread and what it waits on. An exception thrown on a simulated thread comes out.
std::string RunOnVirtualTime(SimRuntime& runtime, const std::function<void()>& body,
                             Duration limit = std::chrono::hours(1));

// Waits on `runtime`'s clock until `cond` holds, checking every `step`; false when `limit` passed
// first. On the real runtime it polls in real time, on the simulator in virtual time.
bool WaitUntilHolds(Runtime& runtime, const std::function<bool()>& cond, Duration limit = std::chrono::seconds(10),
                    Duration step = std::chrono::milliseconds(1));

}  // namespace kvchaos::sim
