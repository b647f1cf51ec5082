// The run loop of `kvchaos run`: every planned (scenario, seed) run, each in sim or real mode,
// spread over `jobs` worker threads (each simulator run is single-threaded and independent, and a
// run's result depends only on its scenario and seed, so the thread count never changes results).
// Results come back in plan order whatever order they finished in.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/run_plan.h"
#include "harness/run_result.h"
#include "harness/scenario.h"

namespace kvchaos::harness {

// `history_dir` set: the run writes its history of meta calls there (RunResult::HistoryFileName).
RunResult RunOne(const Scenario& scenario, uint64_t seed, const std::string& history_dir = "");

struct RunnerOptions {
  int jobs = 1;
  // Only runs of this mode (others are skipped, not failed); none: every run.
  std::optional<RunMode> only_mode;
  // Called from the worker that finished a run (possibly several at once).
  std::function<void(const RunResult&)> on_finished;
  // Copied into every result, for its repro command (RunResult::program, run_flags): the kvchaos
  // command the user can type, and the flags that change a real run (--faultfs PATH).
  std::string program = "kvchaos";
  std::vector<std::string> real_run_flags;
  // Where sim runs write their histories (the --out directory); empty: not written.
  std::string history_dir;
};

// Drops the runs `options.only_mode` excludes.
std::vector<PlannedRun> FilterByMode(std::vector<PlannedRun> runs, std::optional<RunMode> mode);

std::vector<RunResult> RunAll(const std::vector<PlannedRun>& runs, const RunnerOptions& options);

}  // namespace kvchaos::harness
