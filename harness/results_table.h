// The table `kvchaos run` prints after its runs: one row per run (scenario, seed, mode, verdict,
// failovers, worst failover, stale writes accepted/rejected, operations, trace hash — the same on
// rerun of a sim seed —, failed checks), a total, and for every failed run the one-line command
// that reproduces it (runs the interrupt stopped are counted apart and have none).
#pragma once

#include <ostream>
#include <vector>

#include "harness/run_result.h"

namespace kvchaos::harness {

void PrintResultsTable(const std::vector<RunResult>& results, std::ostream& out);

}  // namespace kvchaos::harness
