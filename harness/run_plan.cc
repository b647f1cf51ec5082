// Run planning for `kvchaos run` (see run_plan.h).
#include "harness/run_plan.h"

#include <algorithm>
#include <charconv>

#include "harness/scenario_loader.h"

namespace kvchaos::harness {
namespace {

bool ParseU64(std::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

Result<SeedRange> ParseSeedRange(std::string_view text) {
  const size_t dots = text.find("..");
  SeedRange range;
  if (dots == std::string_view::npos) {
    if (!ParseU64(text, &range.first)) {
      return Status::InvalidArgument("seed '" + std::string(text) + "': expected a non-negative integer or A..B");
    }
    range.last = range.first;
    return range;
  }
  if (!ParseU64(text.substr(0, dots), &range.first) || !ParseU64(text.substr(dots + 2), &range.last)) {
    return Status::InvalidArgument("seeds '" + std::string(text) + "': expected A..B with non-negative integers");
  }
  if (range.last < range.first) {
    return Status::InvalidArgument("seeds '" + std::string(text) + "': the range is empty (B is below A)");
  }
  return range;
}

Result<Shard> ParseShard(std::string_view text) {
  const size_t slash = text.find('/');
  uint64_t k = 0;
  uint64_t n = 0;
  if (slash == std::string_view::npos || !ParseU64(text.substr(0, slash), &k) ||
      !ParseU64(text.substr(slash + 1), &n)) {
    return Status::InvalidArgument("shard '" + std::string(text) + "': expected K/N, e.g. 2/4");
  }
  if (n == 0 || n > 10000 || k == 0 || k > n) {
    return Status::InvalidArgument("shard '" + std::string(text) + "': need 1 <= K <= N <= 10000");
  }
  return Shard{static_cast<int>(k), static_cast<int>(n)};
}

Result<std::vector<PlannedRun>> PlanRuns(const std::vector<std::string>& paths, const RunPlanOptions& options) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    Result<std::vector<std::string>> found = FindScenarioFiles(path);
    if (!found.ok()) return found.status();
    files.insert(files.end(), found->begin(), found->end());
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (files.empty()) return Status::NotFound("no scenario files (*.yaml, *.yml) under the given paths");

  std::vector<Scenario> scenarios;
  std::string problems;
  for (const std::string& file : files) {
    Result<Scenario> s = LoadScenarioFile(file);
    if (!s.ok()) {
      problems += (problems.empty() ? "" : "\n") + s.status().message();
    } else {
      scenarios.push_back(std::move(*s));
    }
  }
  if (!problems.empty()) return Status::InvalidConfig(problems);
  // Results are named after the scenario (<name>-<seed>.json) and grouped by it in reports: two
  // files with one name would overwrite each other's results.
  for (size_t i = 0; i < scenarios.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (scenarios[i].name == scenarios[j].name) {
        problems += (problems.empty() ? "" : "\n") + scenarios[i].file + ": name '" + scenarios[i].name +
                    "' is also the name of " + scenarios[j].file +
                    ": their results would overwrite each other (<name>-<seed>.json); rename one";
        break;
      }
    }
  }
  if (!problems.empty()) return Status::InvalidConfig(problems);

  const uint64_t per_file = options.seeds ? options.seeds->count() : 1;
  if (options.seeds && (per_file == 0 || per_file > kMaxPlannedRuns / (2 * scenarios.size()))) {
    return Status::InvalidArgument("seeds " + std::to_string(options.seeds->first) + ".." +
                                   std::to_string(options.seeds->last) + " over " + std::to_string(scenarios.size()) +
                                   " scenario(s) is more than " + std::to_string(kMaxPlannedRuns) + " runs");
  }
  std::vector<PlannedRun> plan;
  uint64_t index = 0;
  for (const Scenario& file : scenarios) {
    for (const Scenario& s : ModeVariants(file)) {
      for (uint64_t i = 0; i < per_file; ++i, ++index) {
        if (index % static_cast<uint64_t>(options.shard.count) != static_cast<uint64_t>(options.shard.index - 1)) continue;
        plan.push_back({s, options.seeds ? options.seeds->first + i : s.seed});
      }
    }
  }
  return plan;
}

}  // namespace kvchaos::harness
