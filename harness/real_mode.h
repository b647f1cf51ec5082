// Real mode of `kvchaos run`: scenarios with `mode: real` run against real processes
// (redis-server, `kvchaos node`, faultfs mounts). The `kvchaos node` service is not built yet,
// so a real run ends at once with a result whose `error` says so, never a pretend pass.
#pragma once

#include <cstdint>

#include "harness/run_result.h"
#include "harness/scenario.h"

namespace kvchaos::harness {

inline constexpr const char* kRealModeUnavailable = "real mode needs kvchaos node, not built yet";

RunResult RunRealScenario(const Scenario& scenario, uint64_t seed);

}  // namespace kvchaos::harness
