// Run results for the harness and report tests: one passing and one failing run with every field set.
#pragma once

#include "harness/run_result.h"

namespace kvchaos::harness::testing {

inline RunResult PassingRun() {
  RunResult r;
  r.scenario_name = "leader-crash";
  r.scenario_file = "scenarios/ci/leader-crash.yaml";
  r.scenario_hash = "0123456789abcdef";
  r.mode = "sim";
  r.seed = 42;
  r.build_id = "abc123def456";
  r.version = "0.1.0";
  r.trace_hash = "fedcba9876543210";
  r.duration_ms = 120000;
  r.wall_ms = 12.5;
  r.nodes = 3;
  r.failover_bound_ms = 2500;
  r.verdicts = {{"no_stale_writes", true, "stale writes accepted: 0 (rejected: 3)"},
                {"failover_p99_ms", true, "p99 2101.5 ms <= 2500 ms"}};
  r.failovers = {{"crash", 30000, 0, 1, std::nullopt, 31950.25, 32101.5, false}};
  r.leadership = {{0, 0, 30000, true}, {1, 31950.25, 120000, false}, {1, 32101.5, 120000, true}};
  r.faults = {{"crash", "leader (node 0)", 30000, 45000}};
  r.counters.saves = 1200;
  r.counters.loads = 1100;
  r.counters.failovers = 1;
  r.counters.stale_writes_rejected = 3;
  r.counters.dual_acting_ms = 0.5;
  r.counters.trace_events = 88123;
  return r;
}

inline RunResult FailingRun() {
  RunResult r = PassingRun();
  r.scenario_name = "redis-outage-long";
  r.scenario_file = "scenarios/ci/redis outage long.yaml";  // a space, so the repro needs quoting
  r.seed = 7;
  r.verdicts = {{"no_stale_writes", false, "stale writes accepted: 2 (rejected: 0)"},
                {"no_dual_acting", false, "2 windows, 140.0 ms in total"},
                {"failover_p99_ms", true, "p99 2101.5 ms <= 2500 ms"}};
  r.counters.stale_writes_accepted = 2;
  r.counters.dual_acting_windows = 2;
  return r;
}

}  // namespace kvchaos::harness::testing
