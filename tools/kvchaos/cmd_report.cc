// `kvchaos report failover RESULTS... --out DIR [--timeline SCENARIO:SEED]`: turns run result
// files (or directories of them) into a failover timing report — summary.json, summary.md and a
// self-contained report.html with SVG charts (reports/failover_report.h).
//
// Exit status: 0 report written, 2 bad input (an unreadable or malformed result, an unknown
// timeline run) or an output that could not be written; nothing is written on bad input.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "reports/failover_report.h"
#include "tools/kvchaos/command_registry.h"

namespace kvchaos::cli {
namespace {

struct FailoverArgs {
  std::vector<std::string> results;
  std::string out;
  std::string timeline;
};

int RunFailoverReport(const FailoverArgs& args) {
  std::vector<std::string> skipped;
  Result<std::vector<harness::RunResult>> results = reports::LoadResults(args.results, &skipped);
  for (const std::string& line : skipped) std::cerr << "note: " << line << "\n";
  if (!results.ok()) {
    std::cerr << "kvchaos report failover: " << results.status().message() << "\n";
    return 2;
  }
  const Status written = reports::WriteFailoverReport(*results, {args.out, args.timeline});
  if (!written.ok()) {
    std::cerr << "kvchaos report failover: " << written.message() << "\n";
    return 2;
  }
  std::cout << "read " << results->size() << " result(s); wrote " << args.out << "/summary.json, " << args.out
            << "/summary.md, " << args.out << "/report.html\n";
  return 0;
}

const bool registered = RegisterCommand(
    {"report", "Reports from run results: failover timing (Markdown, HTML with SVG charts, JSON)",
     [](CLI::App& parent) {
       CLI::App* report =
           parent.add_subcommand("report", "Reports from run results: failover timing (Markdown, HTML, JSON)");
       report->require_subcommand(1);
       auto args = std::make_shared<FailoverArgs>();
       CLI::App* failover = report->add_subcommand(
           "failover", "Failover time per fault class (p50/p90/p99/max vs the bound), safety counters, charts");
       failover->add_option("results", args->results, "Result JSON files or directories holding them")
           ->required();
       failover->add_option("--out", args->out, "Directory to write summary.json, summary.md and report.html to")
           ->required();
       failover->add_option("--timeline", args->timeline,
                            "Run whose leadership timeline to draw, as SCENARIO:SEED (default: the first failed "
                            "run, else the one with the slowest failover)");
       failover->callback([args] {
         const int rc = RunFailoverReport(*args);
         if (rc != 0) throw CLI::RuntimeError(rc);
       });
     }});

}  // namespace
}  // namespace kvchaos::cli
