// The part of a RunResult that every mode fills the same way before it runs anything: what ran
// (scenario name, file, hash, mode, seed), with which build, and the bounds it is judged by.
#pragma once

#include <cstdint>

#include "harness/run_result.h"
#include "harness/scenario.h"

namespace kvchaos::harness {

RunResult StartRunResult(const Scenario& scenario, uint64_t seed, RunMode mode);

}  // namespace kvchaos::harness
