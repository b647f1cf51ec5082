// What `kvchaos run PATH... [--seed N | --seeds A..B] [--shard K/N]` will run, decided before
// anything runs: the scenario files (directories expanded, sorted), the seeds for each (the
// file's own seed unless overridden), and this machine's share of the runs.
//
// A file of `mode: both` stands for two runs per seed, its sim copy and its real copy
// (ModeVariants). Sharding is round-robin over the runs in (file, mode, seed) order: run i goes to
// shard i % N + 1.
// Every machine computes the same list from the same checkout, so N machines given K = 1..N
// together run each (file, seed) exactly once, and shard sizes differ by at most one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "harness/scenario.h"

namespace kvchaos::harness {

struct SeedRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
  uint64_t count() const { return last - first + 1; }
};

struct Shard {
  int index = 1;  // 1-based
  int count = 1;
};

// "7" → 7..7; "1..100" → 1..100. Errors name the text and say what is expected.
Result<SeedRange> ParseSeedRange(std::string_view text);
// "2/4" → shard 2 of 4 (1 <= K <= N).
Result<Shard> ParseShard(std::string_view text);

struct PlannedRun {
  Scenario scenario;  // as loaded from its file
  uint64_t seed = 0;
};

struct RunPlanOptions {
  std::optional<SeedRange> seeds;  // none: each scenario's own seed
  Shard shard;
};

// Bound on runs one invocation may plan: `--seeds 0..18446744073709551615` is a typo.
inline constexpr uint64_t kMaxPlannedRuns = 10'000'000;

// Loads every scenario under `paths` (all problems of all files reported together) and lists
// this shard's runs in (file, seed) order.
Result<std::vector<PlannedRun>> PlanRuns(const std::vector<std::string>& paths, const RunPlanOptions& options);

}  // namespace kvchaos::harness
