// Aggregation of run results into the numbers a failover report shows: per fault class the
// failover-time distribution (p50/p90/p99/max, nearest-rank percentiles) against the scenario's
// bound, and across all runs the safety counters (dual-acting windows, stale writes accepted and
// rejected, unnecessary failovers), the runs and the seeds they used.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/run_result.h"

namespace kvchaos::reports {

struct ClassStats {
  std::string fault_class;
  std::vector<double> failover_ms;  // sorted ascending
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  std::vector<double> unavailable_ms;  // per failover, the data plane's gap (FailoverEvent::unavailable_ms); sorted
  double unavailable_p99 = 0, unavailable_max = 0;
  // The strictest failover_p99_ms bounding this class among its runs: the class's own bound
  // (expect.classes.<class>) where the run sets one, else the run's.
  std::optional<int64_t> bound_ms;
  size_t over_bound = 0;            // failovers longer than their own run's bound
  size_t unnecessary = 0;
  size_t reelections = 0;  // the node that lost leadership took it back
};

// What the data-plane clients of a scenario's runs saw, summed over the runs that measured it
// (RunResult::data_plane; real mode today).
struct DataPlaneTotals {
  size_t runs = 0;  // runs that measured a data plane
  int64_t saves = 0;
  int64_t loads = 0;
  std::map<std::string, int64_t> errors_by_code;
  int64_t corrupt_detected = 0;  // checksum mismatches reported as errors
  int64_t corrupt_returned = 0;  // corrupt data returned as good: always a violation
  int64_t acked_blocks = 0;
  int64_t acked_unreadable = 0;  // acknowledged blocks the final readback could not read
  int64_t health_transitions = 0;
};

// The history checks of a scenario's runs (RunResult::history; docs/history.md), summed over the
// runs that checked one, with the first anomaly found and the run that replays it. No check times:
// they are host time, and a report of the same runs reads the same wherever they ran.
struct HistoryTotals {
  size_t runs = 0;  // runs that checked a history
  int64_t operations = 0;
  int64_t keys = 0;
  int64_t keys_not_linearizable = 0;
  int64_t keys_unknown_budget = 0;
  int64_t lost_writes = 0;
  int64_t non_monotonic_reads = 0;
  int64_t read_your_writes = 0;
  std::string first_anomaly;         // "" when none
  std::vector<std::string> anomaly;  // its smallest failing ops, one line each
  std::vector<harness::AnomalyOp> anomaly_ops;  // the same ops, for the timeline chart
  std::string anomaly_key;           // the key they are of ("" when the anomaly names none)
  std::string anomaly_repro;         // the command that replays the run it came from
};

struct ScenarioRuns {
  std::string name;
  std::string hash;
  std::string modes;  // "sim", "real" or "sim, real"
  size_t runs = 0;
  size_t failed = 0;
  std::vector<uint64_t> seeds;  // sorted, distinct
  DataPlaneTotals data_plane;
  HistoryTotals history;
};

// Failovers and their safety figures per coordination kind and mode, so the same timeline run
// against redis, redis-sentinel and etcd reads side by side.
struct CoordinationStats {
  std::string coordination;  // RunResult::coordination; "not recorded" for older results
  std::string mode;          // "sim" | "real"
  size_t runs = 0;
  std::vector<double> failover_ms;     // sorted
  std::vector<double> unavailable_ms;  // sorted
  double p50 = 0, p99 = 0, max = 0, unavailable_p99 = 0;
  int64_t dual_acting_windows = 0;
  double dual_acting_ms = 0;
  int64_t stale_writes_accepted = 0;
  int64_t token_regressions = 0;  // a fencing token handed out again or lower
  int64_t duplicate_lock_holders = 0;  // measured in mode sim only (RunCounters)
  int64_t unnecessary = 0;
};

struct FailoverSummary {
  size_t runs = 0;
  size_t failed_runs = 0;
  std::vector<uint64_t> seeds;  // sorted, distinct, over all scenarios
  std::vector<ScenarioRuns> scenarios;  // by name
  std::vector<ClassStats> classes;      // by class name
  std::vector<CoordinationStats> coordination;  // by (coordination, mode)
  size_t failovers = 0;
  int64_t dual_acting_windows = 0;
  double dual_acting_ms = 0;
  int64_t stale_writes_accepted = 0;
  int64_t stale_writes_rejected = 0;
  int64_t unnecessary_failovers = 0;
  std::vector<std::string> build_ids;  // sorted, distinct
  std::vector<const harness::RunResult*> failed;  // in input order
};

// Nearest-rank percentile of sorted `values` (p in (0, 100]): the smallest value with at least
// p% of the values at or below it. 0 for an empty list.
double Percentile(const std::vector<double>& sorted, double p);

FailoverSummary Summarize(const std::vector<harness::RunResult>& results);

// summary.json; documented in reports/README.md.
nlohmann::json SummaryToJson(const FailoverSummary& summary);

}  // namespace kvchaos::reports
