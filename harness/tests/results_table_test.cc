// The results table: a row per run with its verdict and figures, a total, and the repro command
// for each failure — and no repro section when everything passed.
#include "harness/results_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "harness/tests/result_fixtures.h"

namespace kvchaos::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Table(const std::vector<RunResult>& results) {
  std::ostringstream out;
  PrintResultsTable(results, out);
  return out.str();
}

TEST(ResultsTable, ShowsARowPerRunAndTheReproCommandOfEachFailure) {
  const std::string table = Table({testing::PassingRun(), testing::FailingRun()});
  EXPECT_THAT(table, HasSubstr("SCENARIO"));
  EXPECT_THAT(table, HasSubstr("leader-crash       42    sim   PASS    1          2102"));
  EXPECT_THAT(table, HasSubstr("redis-outage-long  7     sim   FAIL"));
  EXPECT_THAT(table, HasSubstr("2/3"));
  EXPECT_THAT(table, HasSubstr("no_stale_writes,no_dual_acting"));
  EXPECT_THAT(table, HasSubstr("2 run(s): 1 passed, 1 failed"));
  EXPECT_THAT(table, HasSubstr("Reproduce each failure with:\n  kvchaos run 'scenarios/ci/redis outage long.yaml' "
                               "--seed 7\n"));
  EXPECT_THAT(table, Not(HasSubstr("--seed 42"))) << "passing runs need no repro line";
}

TEST(ResultsTable, AllPassingPrintsNoReproSection) {
  const std::string table = Table({testing::PassingRun()});
  EXPECT_THAT(table, HasSubstr("1 run(s): 1 passed, 0 failed"));
  EXPECT_THAT(table, Not(HasSubstr("Reproduce")));
}

// Runs the interrupt stopped are not failures: no repro line for them (rerunning them reproduces
// nothing), counted apart in the total.
TEST(ResultsTable, RunsStoppedByAnInterruptGetNoReproLine) {
  RunResult stopped = testing::PassingRun();
  stopped.mode = "real";
  stopped.error = "interrupted by a signal: the run was stopped and torn down";
  stopped.interrupted = true;
  const std::string table = Table({testing::PassingRun(), stopped});
  EXPECT_THAT(table, HasSubstr("STOPPED"));
  EXPECT_THAT(table, HasSubstr("2 run(s): 1 passed, 0 failed, 1 stopped by the interrupt"));
  EXPECT_THAT(table, Not(HasSubstr("Reproduce each failure with")));
  const std::string mixed = Table({testing::FailingRun(), stopped});
  EXPECT_THAT(mixed, HasSubstr("Reproduce each failure with:\n  kvchaos run 'scenarios/ci/redis outage long.yaml' --seed 7\n"));
  EXPECT_THAT(mixed, Not(HasSubstr("--mode real"))) << "the stopped run has no repro line";
}

TEST(ResultsTable, ShowsEachRunsTraceHash) {
  EXPECT_THAT(Table({testing::PassingRun()}), HasSubstr("fedcba9876543210"));
  RunResult real = testing::PassingRun();
  real.trace_hash.clear();
  EXPECT_THAT(Table({real}), Not(HasSubstr("fedcba9876543210")));
}

TEST(ResultsTable, ARunThatErroredSaysWhy) {
  RunResult r = testing::PassingRun();
  r.error = "faultfs mount failed";
  const std::string table = Table({r});
  EXPECT_THAT(table, HasSubstr("ERROR"));
  EXPECT_THAT(table, HasSubstr("error: faultfs mount failed"));
  EXPECT_THAT(table, HasSubstr("kvchaos run scenarios/ci/leader-crash.yaml --seed 42"));
}

}  // namespace
}  // namespace kvchaos::harness
