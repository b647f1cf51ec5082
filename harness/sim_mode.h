// Sim mode of `kvchaos run`: a Scenario becomes a simulator config whose only faults are the
// scenario's timeline (no generated chaos), the simulator runs it for one seed, and its records
// become a RunResult judged against the scenario's expectations.
//
// The simulator ends every fault and heals everything for a quiet phase at the end of the run; it
// starts after the scenario's last fault has ended (at the latest liveness bound + 2 leases before
// the end), so no fault of the timeline is dropped. Store faults run on the simulated disk: each
// backend of the topology is a mount of one storage, with the same faultfs rule real mode installs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "harness/run_result.h"
#include "harness/scenario.h"
#include "sim/world.h"

namespace kvchaos::harness {

// The simulator config of `scenario` run with `seed`, and the class and target of each explicit
// fault (same order as config.explicit_faults) for the result. An action the simulator cannot
// model is an InvalidConfig error naming the scenario file, the fault's line and the action.
struct SimPlan {
  sim::SimConfig config;
  std::vector<std::string> fault_classes;  // the scenario class of each config.explicit_faults entry
  std::vector<AppliedFault> applied;       // the faults as a timeline shows them (starts only)
};
Result<SimPlan> PlanSimRun(const Scenario& scenario, uint64_t seed);

// Runs one seed. Never throws: a scenario the simulator cannot run gives a result with `error` set.
// `history_dir` set: the run's history of meta calls goes there as RunResult::HistoryFileName().
RunResult RunSimScenario(const Scenario& scenario, uint64_t seed, const std::string& history_dir = "");

}  // namespace kvchaos::harness
