// What the `kvchaos sim` command, the tests and the benchmark do with whole runs: check that a
// seed replays (and find the first diverging event when it does not), hunt for a planted bug
// over a range of seeds, summarise failover timings, and write results as JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/world.h"

namespace kvchaos::sim {

struct DeterminismReport {
  bool identical = true;
  uint64_t hash_first = 0;
  uint64_t hash_second = 0;
  int64_t diverging_checkpoint = -1;  // index of the first differing checkpoint
  std::string first_line;             // the first diverging event, as each run traced it
  std::string second_line;
};

// Runs `first` and `second` (normally the same config) and compares their traces checkpoint by
// checkpoint; on a difference both are rerun with text capture of the diverging window to name
// the first event that differs.
DeterminismReport CompareRuns(const SimConfig& first, const SimConfig& second);
inline DeterminismReport CheckDeterminism(const SimConfig& config) { return CompareRuns(config, config); }

struct BugHunt {
  PlantedBug bug = PlantedBug::kNone;
  bool caught = false;
  uint64_t seed = 0;  // the seed that caught it
  uint64_t seeds_run = 0;
  std::string violation;
};
// Where a planted bug can show: `base` with what the bug needs — store bugs a data plane and the
// store faults that expose them (hangs and latency for late reads, EIO for the health window, bit
// flips for skipped verification), the recovery bug Redis wipes (a counter reset is what fencing a
// new term guards against).
SimConfig HuntingGround(SimConfig base, PlantedBug bug);
// Turns on the data plane of `kvchaos sim --data`: 3 paths to one storage, durable commits, 20
// saves and 20 loads a second of 4 KiB blocks, generated store faults and power losses.
void AddDataPlane(SimConfig& config);
// The violations that catch `bug`. A run of its hunting ground may show others with correct code
// (a Redis wipe always regresses tokens): they do not count as catching it.
std::vector<ViolationKind> CatchingViolations(PlantedBug bug);
// Runs seeds first_seed, first_seed + 1, ... of HuntingGround(base, bug) with `bug` planted until a
// run reports one of CatchingViolations(bug), or `max_seeds` seeds ran.
BugHunt HuntPlantedBug(SimConfig base, PlantedBug bug, uint64_t first_seed, uint64_t max_seeds);

// Percentiles (nearest rank) of a sample, in the sample's unit; 0 for an empty sample.
int64_t Percentile(std::vector<int64_t> values, double p);

nlohmann::json ResultToJson(const SimConfig& config, const SimResult& result);
nlohmann::json ConfigToJson(const SimConfig& config);

}  // namespace kvchaos::sim
