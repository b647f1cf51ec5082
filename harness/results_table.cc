// Rendering of the results table (see results_table.h). Plain ASCII columns so it reads the same
// in a terminal, a CI log and a pasted issue.
#include "harness/results_table.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace kvchaos::harness {
namespace {

std::string Ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), ms >= 100 ? "%.0f" : "%.1f", ms);
  return buf;
}

std::vector<std::string> Row(const RunResult& r) {
  double worst = 0;
  for (const FailoverEvent& f : r.failovers) worst = std::max(worst, f.failover_ms());
  std::string failed;
  for (const InvariantVerdict& v : r.verdicts) {
    if (!v.passed) failed += (failed.empty() ? "" : ",") + v.name;
  }
  if (!r.error.empty()) failed = "error: " + r.error;
  return {r.scenario_name,
          std::to_string(r.seed),
          r.mode,
          r.passed() ? "PASS" : r.interrupted ? "STOPPED" : (r.error.empty() ? "FAIL" : "ERROR"),
          std::to_string(r.failovers.size()),
          r.failovers.empty() ? "-" : Ms(worst),
          std::to_string(r.counters.stale_writes_accepted) + "/" + std::to_string(r.counters.stale_writes_rejected),
          std::to_string(r.counters.ops()),
          r.trace_hash.empty() ? "-" : r.trace_hash,
          failed.empty() ? "-" : failed};
}

}  // namespace

void PrintResultsTable(const std::vector<RunResult>& results, std::ostream& out) {
  const std::vector<std::string> header{"SCENARIO", "SEED", "MODE", "RESULT", "FAILOVERS", "MAX FAILOVER ms",
                                        "STALE acc/rej", "OPS", "TRACE HASH", "FAILED CHECKS"};
  std::vector<std::vector<std::string>> rows{header};
  for (const RunResult& r : results) rows.push_back(Row(r));
  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out << line << "\n";
  }
  size_t failed = 0, stopped = 0;
  for (const RunResult& r : results) {
    if (r.interrupted) ++stopped;
    else if (!r.passed()) ++failed;
  }
  out << "\n" << results.size() << " run(s): " << results.size() - failed - stopped << " passed, " << failed << " failed";
  if (stopped > 0) out << ", " << stopped << " stopped by the interrupt (not failures: nothing to reproduce)";
  out << "\n";
  if (failed == 0) return;
  out << "\nReproduce each failure with:\n";
  for (const RunResult& r : results) {
    if (!r.passed() && !r.interrupted) out << "  " << r.ReproCommand() << "\n";
  }
}

}  // namespace kvchaos::harness
