// The run loop of `kvchaos run`; see runner.h.
#include "harness/runner.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <string>
#include <thread>

#include "core/common/thread_util.h"
#include "harness/real_mode.h"
#include "harness/sim_mode.h"

namespace kvchaos::harness {

RunResult RunOne(const Scenario& scenario, uint64_t seed, const std::string& history_dir) {
  try {
    return scenario.mode == RunMode::kSim ? RunSimScenario(scenario, seed, history_dir) : RunRealScenario(scenario, seed, history_dir);
  } catch (const std::exception& e) {
    // A run that throws must not take the other runs down with it.
    RunResult r;
    r.scenario_name = scenario.name;
    r.scenario_file = scenario.file;
    r.mode = std::string(RunModeName(scenario.mode));
    r.both_modes = scenario.both_modes;
    r.seed = seed;
    r.error = std::string("run aborted: ") + e.what();
    return r;
  }
}

std::vector<PlannedRun> FilterByMode(std::vector<PlannedRun> runs, std::optional<RunMode> mode) {
  if (!mode) return runs;
  std::erase_if(runs, [&](const PlannedRun& r) { return r.scenario.mode != *mode; });
  return runs;
}

std::vector<RunResult> RunAll(const std::vector<PlannedRun>& runs, const RunnerOptions& options) {
  std::vector<RunResult> results(runs.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < runs.size(); i = next.fetch_add(1)) {
      results[i] = RunOne(runs[i].scenario, runs[i].seed, options.history_dir);
      results[i].program = options.program;
      if (runs[i].scenario.mode == RunMode::kReal) results[i].run_flags = options.real_run_flags;
      if (options.on_finished) options.on_finished(results[i]);
    }
  };
  const size_t jobs = std::clamp<size_t>(static_cast<size_t>(std::max(1, options.jobs)), 1, std::max<size_t>(1, runs.size()));
  if (jobs == 1) {
    work();
    return results;
  }
  // Harness workers are plain threads: they drive whole simulations, each with its own runtime.
  std::vector<std::thread> workers;
  for (size_t j = 0; j < jobs; ++j) {
    workers.emplace_back([&, j] {
      SetCurrentThreadName("kvc_run" + std::to_string(j));
      work();
    });
  }
  for (std::thread& t : workers) t.join();
  return results;
}

}  // namespace kvchaos::harness
