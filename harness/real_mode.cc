// Real mode placeholder until `kvchaos node` exists; see real_mode.h.
#include "harness/real_mode.h"

#include "core/common/version.h"
#include "harness/scenario_hash.h"

namespace kvchaos::harness {

RunResult RunRealScenario(const Scenario& scenario, uint64_t seed) {
  RunResult r;
  r.scenario_name = scenario.name;
  r.scenario_file = scenario.file;
  r.scenario_hash = ScenarioHash(scenario);
  r.mode = "real";
  r.seed = seed;
  r.build_id = kBuildId;
  r.version = kVersion;
  r.nodes = scenario.topology.nodes;
  r.failover_bound_ms = scenario.expect.failover_p99_ms;
  r.error = std::string(kRealModeUnavailable) + " (" + scenario.file + ")";
  return r;
}

}  // namespace kvchaos::harness
