// See run_result_start.h.
#include "harness/run_result_start.h"

#include <string>

#include "core/common/version.h"
#include "harness/scenario_hash.h"

namespace kvchaos::harness {

RunResult StartRunResult(const Scenario& scenario, uint64_t seed, RunMode mode) {
  RunResult r;
  r.scenario_name = scenario.name;
  r.scenario_file = scenario.file;
  r.scenario_hash = ScenarioHash(scenario);
  r.mode = std::string(RunModeName(mode));
  r.both_modes = scenario.both_modes;
  r.seed = seed;
  r.build_id = kBuildId;
  r.version = kVersion;
  r.duration_ms = static_cast<double>(ToMillis(scenario.duration));
  r.nodes = scenario.topology.nodes;
  r.coordination = std::string(CoordinationKindName(scenario.topology.coordination));
  r.failover_bound_ms = scenario.expect.failover_p99_ms;
  for (const auto& [name, bounds] : scenario.expect.classes) {
    if (bounds.failover_p99_ms) r.class_failover_bounds_ms[name] = *bounds.failover_p99_ms;
  }
  return r;
}

}  // namespace kvchaos::harness
