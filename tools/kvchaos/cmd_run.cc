// `kvchaos run PATH... [--seed N | --seeds A..B] [--jobs J] [--shard K/N] [--out DIR] [--junit FILE]
// [--mode sim|real|all]`: runs scenario files (or directories of them) in the simulator or against
// real processes, shows progress, writes one result JSON per run into --out, prints a table and,
// for every failed run, the one command that reproduces it.
//
// Exit status: 0 every run met its expectations, 1 a run violated an expectation or could not
// complete, 2 bad arguments or scenario files (nothing runs then), 130 interrupted (SIGINT or
// SIGTERM: real runs in progress tear down — children killed, mounts unmounted — and no further
// real run starts; a second signal ends the process at once, and the children die with it
// through their PR_SET_PDEATHSIG).
#if defined(KVCHAOS_SIM_WORLD)  // the runner needs the simulator's world (core/election present)
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "harness/junit_writer.h"
#include "harness/progress.h"
#include "harness/real_mode.h"
#include "harness/results_table.h"
#include "harness/run_plan.h"
#include "harness/runner.h"
#include "tools/kvchaos/command_registry.h"
#include "tools/kvchaos/self_command.h"

namespace kvchaos::cli {
namespace {

struct RunArgs {
  std::vector<std::string> paths;
  std::string seed;
  std::string seeds;
  int jobs = 1;
  std::string shard = "1/1";
  std::string out;
  std::string junit;
  std::string mode = "all";
  std::string faultfs;
};

// First SIGINT/SIGTERM: ask real runs to stop and tear down. SA_RESETHAND makes the second one
// take its default action (end the process).
void OnRunSignal(int) { harness::RequestRealModeStop(); }

void InstallStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnRunSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

[[noreturn]] void BadInput(const std::string& message) {
  std::cerr << "kvchaos run: " << message << "\n";
  throw CLI::RuntimeError(2);
}

int Run(const RunArgs& args) {
  // The elector logs at every fault; thousands of simulated failovers would drown the table.
  if (std::getenv("KVCHAOS_LOG") == nullptr) spdlog::set_level(spdlog::level::off);
  harness::RunPlanOptions options;
  if (!args.seed.empty() && !args.seeds.empty()) BadInput("give --seed or --seeds, not both");
  const std::string& seed_text = args.seeds.empty() ? args.seed : args.seeds;
  if (!seed_text.empty()) {
    Result<harness::SeedRange> range = harness::ParseSeedRange(seed_text);
    if (!range.ok()) BadInput((args.seeds.empty() ? "--seed: " : "--seeds: ") + range.status().message());
    if (!args.seed.empty() && range->count() != 1) BadInput("--seed takes one number; use --seeds A..B for a range");
    options.seeds = *range;
  }
  Result<harness::Shard> shard = harness::ParseShard(args.shard);
  if (!shard.ok()) BadInput("--shard: " + shard.status().message());
  options.shard = *shard;
  std::optional<harness::RunMode> only_mode;
  if (args.mode == "sim") {
    only_mode = harness::RunMode::kSim;
  } else if (args.mode == "real") {
    only_mode = harness::RunMode::kReal;
  } else if (args.mode != "all") {
    BadInput("--mode '" + args.mode + "': expected sim, real or all");
  }
  if (args.jobs < 1) BadInput("--jobs must be at least 1");

  Result<std::vector<harness::PlannedRun>> planned = harness::PlanRuns(args.paths, options);
  if (!planned.ok()) BadInput(planned.status().message());
  const size_t all_runs = planned->size();
  std::vector<std::string> skipped_files;
  for (const harness::PlannedRun& r : *planned) {
    if (only_mode && r.scenario.mode != *only_mode &&
        std::find(skipped_files.begin(), skipped_files.end(), r.scenario.file) == skipped_files.end()) {
      skipped_files.push_back(r.scenario.file);
    }
  }
  std::vector<harness::PlannedRun> runs = harness::FilterByMode(std::move(*planned), only_mode);
  if (all_runs > 0 && runs.empty()) {
    std::string files;
    for (const std::string& f : skipped_files) files += (files.empty() ? "" : ", ") + f;
    BadInput("--mode " + args.mode + " leaves nothing to run: every scenario given is mode " +
             (args.mode == "real" ? "sim" : "real") + " (" + files + ")");
  }
  if (runs.size() != all_runs) {
    std::cout << "skipping " << all_runs - runs.size() << " run(s) not in --mode " << args.mode << "\n";
  }
  if (!args.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.out, ec);
    if (ec) BadInput("--out '" + args.out + "': " + ec.message());
  }

  harness::SetRealModeOptions({args.faultfs, args.out});
  // Only real runs have anything to tear down; without them Ctrl-C keeps its default (end now).
  const bool any_real = std::any_of(runs.begin(), runs.end(),
                                    [](const harness::PlannedRun& r) { return r.scenario.mode == harness::RunMode::kReal; });
  if (any_real) InstallStopHandlers();
  std::cout << "running " << runs.size() << " run(s) on " << args.jobs << " job(s), shard " << options.shard.index << "/"
            << options.shard.count << "\n";
  const auto start = std::chrono::steady_clock::now();
  harness::ProgressReporter progress(std::cout, runs.size(), harness::StdoutIsTerminal(), [start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  harness::RunnerOptions runner;
  runner.jobs = args.jobs;
  runner.program = SelfCommand();
  runner.history_dir = args.out;
  // The faultfs a real run used, so its repro line picks the same one wherever it is typed.
  const char* faultfs_env = std::getenv("KVCHAOS_FAULTFS");
  const std::string faultfs = !args.faultfs.empty() ? args.faultfs : (faultfs_env != nullptr ? faultfs_env : "");
  if (!faultfs.empty()) runner.real_run_flags = {"--faultfs", std::filesystem::absolute(faultfs).lexically_normal().string()};
  std::mutex write_mu;
  std::vector<std::string> write_errors;
  runner.on_finished = [&](const harness::RunResult& r) {
    if (!args.out.empty()) {
      const Status s = harness::WriteRunResult(r, (std::filesystem::path(args.out) / r.FileName()).string());
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(write_mu);
        write_errors.push_back(s.message());
      }
    }
    progress.Finished(r);
  };
  const std::vector<harness::RunResult> results = harness::RunAll(runs, runner);
  progress.Done();
  std::cout << "\n";
  harness::PrintResultsTable(results, std::cout);

  bool ok = write_errors.empty();
  for (const std::string& e : write_errors) std::cerr << "kvchaos run: " << e << "\n";
  if (!args.junit.empty()) {
    const Status s = harness::WriteJUnit(results, args.junit);
    if (!s.ok()) {
      std::cerr << "kvchaos run: --junit: " << s.message() << "\n";
      ok = false;
    }
  }
  if (!args.out.empty()) std::cout << "results: " << args.out << "/\n";
  for (const harness::RunResult& r : results) ok = ok && r.passed();
  if (harness::RealModeStopRequested()) {
    std::cerr << "kvchaos run: interrupted; real runs were stopped and torn down\n";
    return 130;
  }
  return ok ? 0 : 1;
}

const bool registered = RegisterCommand(
    {"run", "Run scenario files (sim or real mode) and check their expectations", [](CLI::App& parent) {
       auto args = std::make_shared<RunArgs>();
       CLI::App* app = parent.add_subcommand("run", "Run scenario files (sim or real mode) and check their expectations");
       app->add_option("paths", args->paths, "Scenario files or directories of them")->required();
       app->add_option("--seed", args->seed, "Run every scenario with this seed (default: each file's own)");
       app->add_option("--seeds", args->seeds, "Run every scenario with each seed of the inclusive range A..B");
       app->add_option("--jobs,-j", args->jobs, "Runs in parallel (default 1)");
       app->add_option("--shard", args->shard, "This machine's share K/N of the runs (default 1/1)");
       app->add_option("--out", args->out, "Write one result JSON per run into this directory");
       app->add_option("--junit", args->junit, "Write a JUnit XML report to this file");
       app->add_option("--mode", args->mode, "Run only sim or real scenarios (default all)");
       app->add_option("--faultfs", args->faultfs,
                       "faultfs binary for real runs (default: $KVCHAOS_FAULTFS, else next to kvchaos)");
       app->callback([args] {
         const int rc = Run(*args);
         if (rc != 0) throw CLI::RuntimeError(rc);
       });
     }});

}  // namespace
}  // namespace kvchaos::cli
#endif  // KVCHAOS_SIM_WORLD
