// Scenario runs from Python, as `kvchaos run` plans and runs them (harness/run_plan.h,
// harness/runner.h), each result as the dict `kvchaos run --out` writes (harness/result.schema.json),
// so a pytest suite can assert on runs: run(...)[0]["passed"], ["counters"], ["failovers"].
// The runs go without the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "harness/run_plan.h"
#include "harness/runner.h"
#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "python/src/errors.h"

namespace kvchaos::python {
namespace {

namespace py = pybind11;

std::optional<harness::RunMode> ParseMode(const std::optional<std::string>& mode) {
  if (!mode) return std::nullopt;
  if (*mode == "sim") return harness::RunMode::kSim;
  if (*mode == "real") return harness::RunMode::kReal;
  throw StatusError(Status::InvalidArgument("mode '" + *mode + "': expected sim, real or None (every run)"));
}

py::list Run(const std::vector<std::string>& paths, const std::optional<std::string>& seeds, const std::string& shard,
             int jobs, const std::optional<std::string>& mode) {
  harness::RunPlanOptions plan;
  if (seeds) plan.seeds = ValueOrThrow(harness::ParseSeedRange(*seeds));
  plan.shard = ValueOrThrow(harness::ParseShard(shard));
  if (jobs < 1) throw StatusError(Status::InvalidArgument("jobs must be at least 1"));
  harness::RunnerOptions options;
  options.jobs = jobs;
  options.only_mode = ParseMode(mode);
  std::vector<harness::RunResult> results;
  Status planned;
  {
    // As `kvchaos run`: the simulated nodes log every election; unless KVCHAOS_LOG asks for them,
    // they are silenced for the runs (and the level restored after).
    const spdlog::level::level_enum level = spdlog::get_level();
    if (std::getenv("KVCHAOS_LOG") == nullptr) spdlog::set_level(spdlog::level::off);
    struct RestoreLevel {
      spdlog::level::level_enum level;
      ~RestoreLevel() { spdlog::set_level(level); }
    } restore{level};
    py::gil_scoped_release unlocked;
    Result<std::vector<harness::PlannedRun>> runs = harness::PlanRuns(paths, plan);
    planned = runs.status();
    if (runs.ok()) results = harness::RunAll(harness::FilterByMode(std::move(*runs), options.only_mode), options);
  }
  ThrowIfError(planned);
  py::list out;
  for (const harness::RunResult& r : results) out.append(FromJson(harness::ToJson(r)));
  return out;
}

}  // namespace

void RegisterScenarios(py::module_& m) {
  m.def("run", &Run, py::arg("paths"), py::kw_only(), py::arg("seeds") = py::none(), py::arg("shard") = "1/1",
        py::arg("jobs") = 1, py::arg("mode") = py::none(),
        "Runs scenario files or directories (`kvchaos run`): seeds 'A..B' or 'N' (None: each file's own), shard "
        "'K/N', mode 'sim' | 'real' | None. Returns one result dict per run, in plan order.");
  m.def(
      "run_scenario",
      [](const std::string& path, std::optional<uint64_t> seed, const std::optional<std::string>& mode) {
        py::list results =
            Run({path}, seed ? std::optional<std::string>(std::to_string(*seed)) : std::nullopt, "1/1", 1, mode);
        if (results.size() != 1) {
          throw StatusError(Status::InvalidArgument(path + ": " + std::to_string(results.size()) +
                                                    " runs planned (mode: both?): pass mode='sim' or 'real', or use run()"));
        }
        return py::object(results[0]);
      },
      py::arg("path"), py::kw_only(), py::arg("seed") = py::none(), py::arg("mode") = py::none(),
      "Runs one scenario file once (its own seed unless given); returns its result dict.");
}

}  // namespace kvchaos::python
