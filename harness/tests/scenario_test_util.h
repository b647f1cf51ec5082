// Scenario texts shared by the harness tests: a valid sim and a valid real scenario to which a
// test appends its own faults or expectations, so each test shows only what it varies.
#pragma once

#include <string>

#include "harness/scenario_loader.h"

namespace kvchaos::harness::testing {

// Lines 1-11; a test's `faults:` list starts on line 12.
inline std::string SimBase() {
  return "name: base-sim\n"              // 1
         "mode: sim\n"                   // 2
         "seed: 7\n"                     // 3
         "duration: 2m\n"                // 4
         "topology:\n"                   // 5
         "  nodes: 3\n"                  // 6
         "  lease_ms: 2000\n"            // 7
         "  loop_interval_ms: 100\n"     // 8
         "workload:\n"                   // 9
         "  save_rate_per_s: 10\n"       // 10
         "  load_rate_per_s: 10\n";      // 11
}

// Lines 1-13; a test's `faults:` list starts on line 14.
inline std::string RealBase() {
  return "name: base-real\n"                   // 1
         "mode: real\n"                        // 2
         "duration: 60s\n"                     // 3
         "topology:\n"                         // 4
         "  nodes: 3\n"                        // 5
         "  lease_ms: 3000\n"                  // 6
         "  loop_interval_ms: 200\n"           // 7
         "  coordination: redis\n"             // 8
         "  backends:\n"                       // 9
         "    - {name: p1, faultfs: true}\n"   // 10
         "    - {name: p2, faultfs: false}\n"  // 11
         "workload:\n"                         // 12
         "  save_rate_per_s: 50\n";            // 13
}

// The error message of parsing `text`, or "" when it parsed.
inline std::string ErrorOf(const std::string& text, const std::string& file = "t.yaml") {
  Result<Scenario> s = ParseScenario(text, file);
  return s.ok() ? std::string() : s.status().message();
}

}  // namespace kvchaos::harness::testing
