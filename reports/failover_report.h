// `kvchaos report failover`: reads run results and writes, into one directory,
//   summary.json  the numbers (format in reports/README.md),
//   summary.md    the same as Markdown tables, for a PR comment or a CI summary,
//   report.html   one self-contained page (inline CSS and SVG, no scripts, nothing fetched) with
//                 per fault class a failover-time CDF and histogram against the bound, and the
//                 leadership timeline of one run.
// All inputs are read and all output rendered before anything is written, so a bad result file
// leaves the output directory untouched.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "harness/run_result.h"
#include "reports/failover_summary.h"

namespace kvchaos::reports {

struct ReportOptions {
  std::string out_dir;
  // "<scenario>:<seed>" picks the run whose leadership timeline is drawn; empty: the first failed
  // run, else the run with the slowest failover.
  std::string timeline_run;
};

// Reads result files. A path given directly must be a result; in a directory every *.json below
// it is read, and JSON that is not a kvchaos result (no "format": "kvchaos-result/…") is skipped
// with a line in `skipped`. Files are read in sorted path order.
Result<std::vector<harness::RunResult>> LoadResults(const std::vector<std::string>& paths,
                                                    std::vector<std::string>* skipped);

// The run whose timeline the report draws (nullptr when `results` is empty).
Result<const harness::RunResult*> ChooseTimelineRun(const std::vector<harness::RunResult>& results,
                                                    const std::string& selector);

// "1-5, 9, 12-13": sorted distinct seeds as ranges.
std::string SeedRanges(const std::vector<uint64_t>& seeds);

std::string RenderMarkdown(const FailoverSummary& summary, const harness::RunResult* timeline);
std::string RenderHtml(const FailoverSummary& summary, const harness::RunResult* timeline);

Status WriteFailoverReport(const std::vector<harness::RunResult>& results, const ReportOptions& options);

}  // namespace kvchaos::reports
