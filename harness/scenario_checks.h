// The checks on a scenario that JSON Schema cannot express: values that are each well-formed but
// impossible together. A fault at or after the end of the run, a node index beyond
// topology.nodes, a restart of a node that is not down at that moment, a store fault on a backend
// that is not on faultfs, a failover bound below what a lease allows, min_ops beyond what the
// workload rate can reach, a fault kind the chosen mode cannot apply, …
//
// `line_of(path)` gives the 1-based line of a key path such as "faults[2].node" (the loader maps
// it to the YAML marks), so each problem points at the line to fix.
#pragma once

#include <functional>
#include <string>

#include "harness/scenario.h"
#include "harness/source_problems.h"

namespace kvchaos::harness {

using LineOf = std::function<int(const std::string& path)>;

void CheckScenario(const Scenario& scenario, const LineOf& line_of, SourceProblems* problems);

}  // namespace kvchaos::harness
