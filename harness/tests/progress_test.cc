// Progress output: plain lines in logs (with the repro command of failures), a bar redrawn in
// place with an ETA from the pace so far on a terminal, failures kept above the bar.
#include "harness/progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "core/common/thread_util.h"

#include "harness/tests/result_fixtures.h"

namespace kvchaos::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Progress, PlainModeWritesOneLinePerRun) {
  std::ostringstream out;
  double now = 0;
  ProgressReporter progress(out, 12, /*terminal=*/false, [&now] { return now; });
  progress.Finished(testing::PassingRun());
  progress.Finished(testing::FailingRun());
  progress.Done();
  EXPECT_EQ(out.str(),
            "[ 1/12] PASS leader-crash seed 42\n"
            "[ 2/12] FAIL redis-outage-long seed 7 — reproduce: kvchaos run 'scenarios/ci/redis outage long.yaml' "
            "--seed 7\n");
}

TEST(Progress, ARunOfAFileForBothModesSaysItsMode) {
  std::ostringstream out;
  ProgressReporter progress(out, 2, /*terminal=*/false, [] { return 0.0; });
  RunResult sim = testing::PassingRun();
  sim.both_modes = true;
  progress.Finished(sim);
  EXPECT_EQ(out.str(), "[1/2] PASS leader-crash (sim) seed 42\n") << "the sim and real runs of a seed must be told apart";
}

TEST(Progress, TerminalModeRedrawsABarWithAnEta) {
  std::ostringstream out;
  double now = 100;
  ProgressReporter progress(out, 4, /*terminal=*/true, [&now] { return now; });
  now = 110;  // one run in 10 s, three to go: 30 s left
  progress.Finished(testing::PassingRun());
  EXPECT_THAT(out.str(), HasSubstr("\r\x1b[2K[#######-----------------------] 1/4  0 failed  ETA 30s  leader-crash seed 42"));
  now = 300;  // two runs in 200 s, two to go: 200 s left
  progress.Finished(testing::FailingRun());
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("FAIL redis-outage-long seed 7 — reproduce: kvchaos run"));
  EXPECT_THAT(text, HasSubstr("2/4  1 failed  ETA 3m20s"));
  EXPECT_LT(text.find("FAIL redis"), text.rfind("2/4")) << "the failure line stays above the redrawn bar";
  progress.Done();
  EXPECT_EQ(out.str().back(), '\n');
  EXPECT_THAT(text, Not(HasSubstr("PASS"))) << "passing runs only move the bar";
}

TEST(Progress, WorkersFinishingAtOnceNeverInterleaveLines) {
  std::ostringstream out;
  ProgressReporter progress(out, 200, /*terminal=*/false, [] { return 0.0; });
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&progress, w] {
      SetCurrentThreadName("kvc_test_run" + std::to_string(w));
      for (int i = 0; i < 50; ++i) progress.Finished(i % 7 == 0 ? testing::FailingRun() : testing::PassingRun());
    });
  }
  for (std::thread& t : workers) t.join();
  std::istringstream lines(out.str());
  const std::regex line_shape(R"(\[ *[0-9]+/200\] (PASS leader-crash seed 42|FAIL redis-outage-long seed 7 — reproduce: .*))");
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    EXPECT_TRUE(std::regex_match(line, line_shape)) << "garbled line: " << line;
  }
  EXPECT_EQ(count, 200);
  EXPECT_THAT(out.str(), HasSubstr("[200/200]"));
}

TEST(Progress, AStoppedRunHasNoReproCommand) {
  std::ostringstream out;
  ProgressReporter progress(out, 1, /*terminal=*/false, [] { return 0.0; });
  RunResult stopped = testing::FailingRun();
  stopped.interrupted = true;
  progress.Finished(stopped);
  EXPECT_EQ(out.str(), "[1/1] STOPPED redis-outage-long seed 7\n");
}

// Items other than scenario runs (kvchaos sim's seeds) use the same bar, and lines printed
// meanwhile go above it.
TEST(Progress, OtherItemsAndPrintedLinesKeepTheBarBelow) {
  std::ostringstream out;
  double now = 0;
  ProgressReporter progress(out, 3, /*terminal=*/true, [&now] { return now; });
  progress.Finished("seed 1", "PASS", false, "");
  now = 10;
  progress.Print("seed=2 hash=00 OK\n");
  progress.Finished("seed 2", "FAIL", true, "kvchaos sim --seed 2");
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("\r\x1b[2Kseed=2 hash=00 OK\n\r\x1b[2K["));
  EXPECT_THAT(text, HasSubstr("FAIL seed 2 — reproduce: kvchaos sim --seed 2\n"));
  EXPECT_THAT(text, HasSubstr("2/3  1 failed"));
}

TEST(Progress, EtaFormats) {
  EXPECT_EQ(ProgressReporter::FormatEta(0), "0s");
  EXPECT_EQ(ProgressReporter::FormatEta(59.4), "59s");
  EXPECT_EQ(ProgressReporter::FormatEta(187), "3m07s");
  EXPECT_EQ(ProgressReporter::FormatEta(3720), "1h02m");
  EXPECT_EQ(ProgressReporter::FormatEta(-5), "0s");
}

}  // namespace
}  // namespace kvchaos::harness
