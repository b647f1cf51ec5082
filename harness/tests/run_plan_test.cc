// Run planning: seed ranges and shards parse strictly, every (file, seed) lands in exactly one
// shard with balanced sizes, and bad files stop the plan with every file's problems listed.
#include "harness/run_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "harness/tests/scenario_test_util.h"

namespace kvchaos::harness {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(RunPlan, SeedRangesAndShardsParseStrictly) {
  EXPECT_EQ(ParseSeedRange("7")->first, 7u);
  EXPECT_EQ(ParseSeedRange("7")->last, 7u);
  EXPECT_EQ(ParseSeedRange("1..100")->count(), 100u);
  EXPECT_EQ(ParseSeedRange("0..18446744073709551615")->last, 18446744073709551615ull);
  EXPECT_THAT(ParseSeedRange("5..1").status().message(), HasSubstr("the range is empty"));
  EXPECT_THAT(ParseSeedRange("-3").status().message(), HasSubstr("expected a non-negative integer or A..B"));
  EXPECT_THAT(ParseSeedRange("1..x").status().message(), HasSubstr("expected A..B"));
  EXPECT_EQ(ParseShard("2/4")->index, 2);
  EXPECT_EQ(ParseShard("2/4")->count, 4);
  EXPECT_THAT(ParseShard("0/4").status().message(), HasSubstr("need 1 <= K <= N"));
  EXPECT_THAT(ParseShard("5/4").status().message(), HasSubstr("need 1 <= K <= N"));
  EXPECT_THAT(ParseShard("2").status().message(), HasSubstr("expected K/N"));
}

class RunPlanFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kvchaos_run_plan_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "sub");
    Write("b.yaml", "base-sim", "seed: 7");
    Write("sub/a.yaml", "other", "seed: 3");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& name, const std::string& seed_line) {
    std::string text = testing::SimBase();
    text.replace(text.find("base-sim"), 8, name);
    text.replace(text.find("seed: 7"), 7, seed_line);
    std::ofstream(dir_ / rel) << text;
  }
  fs::path dir_;
};

TEST_F(RunPlanFiles, WithoutSeedsEachScenarioRunsItsOwnSeed) {
  Result<std::vector<PlannedRun>> plan = PlanRuns({dir_.string()}, {});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ((*plan)[0].scenario.name, "base-sim") << "sorted by path: b.yaml before sub/a.yaml";
  EXPECT_EQ((*plan)[0].seed, 7u);
  EXPECT_EQ((*plan)[1].seed, 3u);
}

TEST_F(RunPlanFiles, AFileForBothModesIsASimRunAndARealRunPerSeed) {
  std::string text = testing::RealBase();
  text.replace(text.find("mode: real"), 10, "mode: both");
  std::ofstream(dir_ / "sub" / "c.yaml") << text;
  RunPlanOptions options;
  options.seeds = SeedRange{1, 2};
  Result<std::vector<PlannedRun>> plan = PlanRuns({(dir_ / "sub" / "c.yaml").string()}, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->size(), 4u) << "two seeds in each of two modes";
  EXPECT_EQ((*plan)[0].scenario.mode, RunMode::kSim);
  EXPECT_EQ((*plan)[1].scenario.mode, RunMode::kSim);
  EXPECT_EQ((*plan)[1].seed, 2u);
  EXPECT_EQ((*plan)[2].scenario.mode, RunMode::kReal);
  EXPECT_EQ((*plan)[3].seed, 2u);
  EXPECT_EQ((*plan)[2].scenario.topology.coordination, CoordinationKind::kRedis);
  EXPECT_EQ((*plan)[0].scenario.topology.coordination, CoordinationKind::kSimRedis);
}

TEST_F(RunPlanFiles, ShardsPartitionTheRunsExactlyOnceAndEvenly) {
  const RunPlanOptions all{SeedRange{1, 25}, Shard{1, 1}};
  Result<std::vector<PlannedRun>> full = PlanRuns({dir_.string(), (dir_ / "b.yaml").string()}, all);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->size(), 50u) << "a file named twice runs once";
  std::multiset<std::pair<std::string, uint64_t>> seen;
  size_t smallest = 1000, largest = 0;
  for (int k = 1; k <= 4; ++k) {
    Result<std::vector<PlannedRun>> part = PlanRuns({dir_.string()}, {SeedRange{1, 25}, Shard{k, 4}});
    ASSERT_TRUE(part.ok());
    smallest = std::min(smallest, part->size());
    largest = std::max(largest, part->size());
    for (const PlannedRun& r : *part) seen.insert({r.scenario.file, r.seed});
  }
  EXPECT_EQ(seen.size(), 50u);
  for (const PlannedRun& r : *full) EXPECT_EQ(seen.count({r.scenario.file, r.seed}), 1u) << r.scenario.file << " " << r.seed;
  EXPECT_LE(largest - smallest, 1u);
}

TEST_F(RunPlanFiles, BadFilesStopThePlanWithEveryProblem) {
  std::ofstream(dir_ / "c.yaml") << "name: broken\n";
  std::ofstream(dir_ / "d.yaml") << "name: [\n";
  Result<std::vector<PlannedRun>> plan = PlanRuns({dir_.string()}, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("c.yaml:1: mode: missing (required)"));
  EXPECT_THAT(plan.status().message(), HasSubstr("d.yaml:"));
  EXPECT_THAT(PlanRuns({(dir_ / "none").string()}, {}).status().message(), HasSubstr("no such file"));
}

TEST_F(RunPlanFiles, AnAbsurdSeedRangeIsRefusedBeforeAnythingRuns) {
  EXPECT_THAT(PlanRuns({dir_.string()}, {SeedRange{0, 18446744073709551614ull}, {}}).status().message(),
              HasSubstr("seeds 0..18446744073709551614 over 2 scenario(s) is more than 10000000 runs"));
}

}  // namespace
}  // namespace kvchaos::harness
