// The failover report end to end on the checked-in fixture results: loading (strict for named
// files, skipping foreign JSON in directories), the three output files and what they contain,
// the choice of timeline run, and that a bad input writes nothing.
#include "reports/failover_report.h"
#include "reports/charts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/tests/result_fixtures.h"

namespace kvchaos::reports {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFixtures = std::string(KVCHAOS_SOURCE_DIR) + "/reports/tests/fixtures";
const std::string kBad = std::string(KVCHAOS_SOURCE_DIR) + "/reports/tests/bad_fixtures";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class FailoverReport : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("kvchaos_report_test_" + std::to_string(::getpid()));
    fs::remove_all(out_);
  }
  void TearDown() override { fs::remove_all(out_); }
  fs::path out_;
};

TEST_F(FailoverReport, LoadsEveryResultInADirectoryAndSkipsForeignJson) {
  std::vector<std::string> skipped;
  Result<std::vector<harness::RunResult>> results = LoadResults({kFixtures}, &skipped);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ(results->size(), 19u);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_THAT(skipped[0], HasSubstr("not-a-result.json: not a kvchaos result file, skipped"));
}

TEST_F(FailoverReport, ANamedBadFileIsAnErrorNamingTheField) {
  Result<std::vector<harness::RunResult>> results = LoadResults({kBad + "/missing-seed.json"}, nullptr);
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(results.status().message(), HasSubstr("missing-seed.json: seed: missing"));
  EXPECT_THAT(LoadResults({kFixtures + "/not-a-result.json"}, nullptr).status().message(), HasSubstr("format: missing"));
  EXPECT_THAT(LoadResults({"/nonexistent/results"}, nullptr).status().message(), HasSubstr("no such file"));
}

TEST_F(FailoverReport, WritesSummaryJsonMarkdownAndSelfContainedHtml) {
  Result<std::vector<harness::RunResult>> results = LoadResults({kFixtures}, nullptr);
  ASSERT_TRUE(results.ok());
  ASSERT_TRUE(WriteFailoverReport(*results, {out_.string(), ""}).ok());

  const nlohmann::json summary = nlohmann::json::parse(Slurp(out_ / "summary.json"));
  EXPECT_EQ(summary["runs"], 19);
  EXPECT_EQ(summary["failed_runs"], 2) << "leader-crash seed 7 broke its bound, redis-outage-long seed 13 its safety";
  EXPECT_EQ(summary["seeds"].size(), 9u) << "seeds 1-8 and 13";
  for (const char* cls : {"leader-crash", "leader-pause", "graceful-demote", "redis-outage-long"}) {
    ASSERT_TRUE(summary["fault_classes"].contains(cls)) << cls;
    const nlohmann::json& c = summary["fault_classes"][cls];
    EXPECT_LE(c["p50_ms"].get<double>(), c["p90_ms"].get<double>());
    EXPECT_LE(c["p90_ms"].get<double>(), c["p99_ms"].get<double>());
    EXPECT_LE(c["p99_ms"].get<double>(), c["max_ms"].get<double>());
  }
  EXPECT_EQ(summary["fault_classes"]["leader-crash"]["failovers"], 72) << "8 runs x 9 crashes";
  EXPECT_EQ(summary["stale_writes_accepted"], 2);
  EXPECT_EQ(summary["dual_acting_windows"], 2);

  const std::string md = Slurp(out_ / "summary.md");
  EXPECT_THAT(md, HasSubstr("# Failover report"));
  EXPECT_THAT(md, HasSubstr("| fault class | failovers | p50 ms | p90 ms | p99 ms | max ms | unavailable p99 ms | unavailable max ms | bound ms |"));
  EXPECT_THAT(md, HasSubstr("| leader-crash | 72 |"));
  EXPECT_THAT(md, HasSubstr("- Seeds: 1-8, 13"));
  EXPECT_THAT(md, HasSubstr("`kvchaos run scenarios/ci/redis-outage-long.yaml --seed 13`"));

  const std::string html = Slurp(out_ / "report.html");
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_EQ(std::count(html.begin(), html.end(), '\0'), 0);
  // Self-contained: no scripts, stylesheets or images fetched from anywhere.
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  size_t svgs = 0;
  for (size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  EXPECT_EQ(svgs, 4u * 2 + 1) << "a CDF and a histogram per class, and one timeline";
  EXPECT_THAT(html, HasSubstr("Leadership timeline — leader-crash, seed 7 (FAILED)"))
      << "by default the timeline shows the first failed run";
}

TEST_F(FailoverReport, TheTimelineRunCanBeChosenAndAnUnknownOneIsAnError) {
  Result<std::vector<harness::RunResult>> results = LoadResults({kFixtures}, nullptr);
  ASSERT_TRUE(results.ok());
  ASSERT_TRUE(WriteFailoverReport(*results, {out_.string(), "leader-crash:3"}).ok());
  EXPECT_THAT(Slurp(out_ / "report.html"), HasSubstr("Leadership timeline — leader-crash, seed 3<"));
  fs::remove_all(out_);
  const Status bad = WriteFailoverReport(*results, {out_.string(), "leader-crash:99"});
  EXPECT_THAT(bad.message(), HasSubstr("no run of scenario 'leader-crash' with seed 99"));
  EXPECT_FALSE(fs::exists(out_)) << "nothing is written when the report cannot be made";
  EXPECT_THAT(WriteFailoverReport(*results, {out_.string(), "nocolon"}).message(), HasSubstr("expected <scenario>:<seed>"));
}

TEST_F(FailoverReport, SeedRangesCompressRuns) {
  EXPECT_EQ(SeedRanges({1, 2, 3, 5, 7, 8}), "1-3, 5, 7-8");
  EXPECT_EQ(SeedRanges({}), "-");
  EXPECT_EQ(SeedRanges({42}), "42");
}

// What a storage engineer looks at first: per scenario the data-plane figures of the runs that
// measured them (real mode), "–" for a scenario none of whose runs did (not 0), every column
// explained under its table, one precision for every time, and no bound shown as "–".
// The same leader-crash timeline against two coordination kinds: one row each, side by side, in
// both renderings, with what the duplicate-holder column counts.
TEST_F(FailoverReport, FailoverAndDualActingPerCoordinationKindSideBySide) {
  harness::RunResult etcd = harness::testing::PassingRun();
  etcd.mode = "real";
  etcd.coordination = "etcd";
  harness::RunResult sentinel = etcd;
  sentinel.coordination = "redis-sentinel";
  sentinel.counters.token_regressions = 1;
  sentinel.counters.dual_acting_windows = 1;
  sentinel.counters.dual_acting_ms = 21.0;
  const FailoverSummary summary = Summarize({etcd, sentinel});
  const std::string md = RenderMarkdown(summary, &etcd);
  EXPECT_THAT(md, HasSubstr("## Failover per coordination"));
  EXPECT_THAT(md, HasSubstr("| etcd | real | 1 | 1 | 2101.5 | 2101.5 | 2101.5 |")) << md;
  EXPECT_THAT(md, HasSubstr("| redis-sentinel | real | 1 | 1 | 2101.5 | 2101.5 | 2101.5 |")) << md;
  EXPECT_THAT(md, HasSubstr("| 1 | 21.0 | 0 | 1 | – | 0 |"))
      << "the sentinel row's dual acting and token regressions; duplicate holders are not measured in real mode\n" << md;
  harness::RunResult sim = sentinel;
  sim.mode = "sim";
  sim.counters.duplicate_lock_holders = 3;
  EXPECT_THAT(RenderMarkdown(Summarize({sim}), &sim), HasSubstr("| 1 | 21.0 | 0 | 1 | 3 | 0 |"))
      << "the simulator counts duplicate lock holders";
  EXPECT_THAT(md, HasSubstr("- *token regressions*: ")) << "the column says what it counts";
  const std::string html = RenderHtml(summary, &etcd);
  EXPECT_THAT(html, HasSubstr("<h2>Failover per coordination</h2>"));
  EXPECT_THAT(html, HasSubstr("<td>redis-sentinel</td>"));
}

TEST_F(FailoverReport, DataPlaneTablePerScenarioWithLegendsAndNoFalseZeros) {
  harness::RunResult sim = harness::testing::PassingRun();  // no data plane, no bound
  sim.failover_bound_ms.reset();
  harness::RunResult real = harness::testing::PassingRun();
  real.scenario_name = "real-backend-eio";
  real.mode = "real";
  real.counters.saves = 240;
  real.counters.loads = 180;
  real.counters.corrupt_reads_detected = 3;
  real.counters.acked_blocks = 240;
  real.counters.acked_blocks_unreadable = 1;
  real.data_plane = harness::DataPlane{{{"IoError", 7}, {"Unavailable", 2}}, 4};
  const FailoverSummary summary = Summarize({sim, real});
  const std::string md = RenderMarkdown(summary, &real);
  EXPECT_THAT(md, HasSubstr("## Data plane per scenario"));
  EXPECT_THAT(md, HasSubstr("| real-backend-eio | real | 1 of 1 | 240 | 180 | IoError 7, Unavailable 2 | 3 | 0 | 240 | 1 | 4 |"))
      << md;
  EXPECT_THAT(md, HasSubstr("| leader-crash | sim | 0 of 1 | – | – | – | – | – | – | – | – |")) << md;
  EXPECT_THAT(md, HasSubstr("- *corrupt returned as good*: corrupt data a Load returned as good (must be 0)"));
  EXPECT_THAT(md, HasSubstr("- *health transitions*: "));
  EXPECT_THAT(md, HasSubstr("- *bound ms*: ")) << "every column of the class table is explained";
  EXPECT_THAT(md, HasSubstr("- *stale writes accepted*: ")) << "every safety row is explained";
  // The class table: times to 0.1 ms everywhere, "–" where the bound does not apply.
  EXPECT_THAT(md, HasSubstr("| crash | 2 | 2101.5 | 2101.5 | 2101.5 | 2101.5 | 2101.5 | 2101.5 | 2500.0 | yes | 0 | 0 |")) << md;
  EXPECT_THAT(md, HasSubstr("(1.0 ms in total)")) << "dual acting time in the same precision";

  const FailoverSummary unbounded = Summarize({sim});
  const std::string md2 = RenderMarkdown(unbounded, &sim);
  EXPECT_THAT(md2, HasSubstr("| crash | 1 | 2101.5 | 2101.5 | 2101.5 | 2101.5 | 2101.5 | 2101.5 | – | – | – | 0 |")) << md2;

  const std::string html = RenderHtml(summary, &real);
  EXPECT_THAT(html, HasSubstr("<h2>Data plane per scenario</h2>"));
  EXPECT_THAT(html, HasSubstr("<dt>acked unreadable</dt><dd>"));
  real.counters.corrupt_reads_returned = 1;
  const std::string bad_html = RenderHtml(Summarize({real}), &real);
  EXPECT_THAT(bad_html, HasSubstr("<td class=\"n bad\">1</td>")) << "corrupt data returned as good stands out";
  const nlohmann::json j = SummaryToJson(summary);
  EXPECT_EQ(j["scenarios"][1]["data_plane"]["errors_by_code"]["IoError"], 7);
  EXPECT_TRUE(j["scenarios"][0]["data_plane"].is_null());
}

TEST_F(FailoverReport, HistoryTablePerScenarioAndTheFirstAnomalyWithItsOpsAndReplay) {
  harness::RunResult clean = harness::testing::PassingRun();
  clean.history = harness::HistoryResult{1200, 300, "linearizable", 0, 0, 0, 0, 0, 12.5, "", "", {}, {}, ""};
  harness::RunResult bad = harness::testing::PassingRun();
  bad.scenario_name = "ack-before-index";
  bad.seed = 9;
  bad.history = harness::HistoryResult{800, 200, "not linearizable", 1, 0, 2, 0, 0, 40.0,
                                       "key k3.v1: no order explains 2 ops", "k3.v1",
                                       {"t=1.0ms..2.0ms client=kvc_load0 finish_write k3.v1 (ok, term 2)",
                                        "t=3.0ms..3.5ms client=kvc_load0 get_location k3.v1 -> none (ok)"},
                                       {},
                                       ""};
  harness::RunResult unchecked = harness::testing::PassingRun();
  unchecked.scenario_name = "elector-only";
  const FailoverSummary summary = Summarize({clean, bad, unchecked});
  const std::string md = RenderMarkdown(summary, &clean);
  EXPECT_THAT(md, HasSubstr("## Histories per scenario"));
  EXPECT_THAT(md, HasSubstr("| ack-before-index | sim | 1 of 1 | 800 | 200 | 1 | 0 | 2 | 0 | 0 |\n")) << md;
  EXPECT_THAT(md, HasSubstr("| leader-crash | sim | 1 of 1 | 1200 | 300 | 0 | 0 | 0 | 0 | 0 |\n"))
      << "no check time (host time) in a report: " << md;
  EXPECT_THAT(md, HasSubstr("| elector-only | sim | 0 of 1 | – |")) << "no history is not a clean history: " << md;
  EXPECT_THAT(md, HasSubstr("### ack-before-index: key k3.v1: no order explains 2 ops")) << md;
  EXPECT_THAT(md, HasSubstr("Replay: `" + bad.ReproCommand() + "`")) << md;
  EXPECT_THAT(md, HasSubstr("get_location k3.v1 -> none (ok)")) << "the failing ops are listed";
  const std::string html = RenderHtml(summary, &clean);
  EXPECT_THAT(html, HasSubstr("<h2>Histories per scenario</h2>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"n bad\">1</td>")) << "a non-linearizable key stands out";
  const nlohmann::json j = SummaryToJson(summary);
  EXPECT_EQ(j["scenarios"][0]["name"], "ack-before-index");
  EXPECT_EQ(j["scenarios"][0]["history"]["keys_not_linearizable"], 1);
  EXPECT_EQ(j["scenarios"][0]["history"]["anomaly"].size(), 2u);
  EXPECT_TRUE(j["scenarios"][1]["history"].is_null()) << "elector-only checked no history";
}

// The first anomaly of a scenario is drawn: a lane per client, a bar per op from invoke to
// complete, coloured by outcome and labelled with op, value, node and term, on a ms axis.
TEST_F(FailoverReport, TheFirstAnomalyIsDrawnAsAPerKeyTimelineOfItsOps) {
  harness::RunResult bad = harness::testing::PassingRun();
  bad.scenario_name = "deposed-leader-reads";
  bad.history = harness::HistoryResult{
      800, 200, "not linearizable", 1, 0, 0, 0, 1, 40.0, "key 'k7.v2' is not linearizable: ...", "k7.v2",
      {"t=1000.0ms..1002.0ms client=kvc_save0 finish_write k7.v2 (ok, term 4)",
       "t=1002.5ms..1003.0ms client=kvc_save0 get_location k7.v2 -> none (ok, served by n1 in term 3)"},
      {{"kvc_save0", "finish_write", "k7.v2", "ok", 1000.0, 1002.0, "crc=00000000000000ff", "", 4},
       {"kvc_save0", "get_location", "k7.v2", "ok", 1002.5, 1003.0, "none", "n1", 3},
       {"kvc_load1", "start_write", "k7.v2", "unknown", 1000.5, 1001.5, "", "", -1},
       {"kvc_load1", "get_location", "k7.v2", "failed", 1002.0, 1002.8, "", "n2", -1}},
      ""};
  const std::string html = RenderHtml(Summarize({bad}), &bad);
  const size_t chart = html.find("Key k7.v2 — first history anomaly of deposed-leader-reads");
  ASSERT_NE(chart, std::string::npos) << "no timeline chart of the anomaly in the report:\n" << html;
  const std::string svg = html.substr(html.rfind("<svg", chart), html.find("</svg>", chart) - html.rfind("<svg", chart));
  EXPECT_THAT(svg, HasSubstr("finish_write crc=00000000000000ff t4")) << "the write, labelled with its term";
  EXPECT_THAT(svg, HasSubstr("get_location none · n1 t3")) << "the stale read names its node and term";
  EXPECT_THAT(svg, HasSubstr("start_write (unknown)"));
  EXPECT_THAT(svg, HasSubstr("get_location · n2 (failed)"));
  EXPECT_THAT(svg, HasSubstr(">kvc_save0</text>")) << "a lane per client";
  EXPECT_THAT(svg, HasSubstr(">kvc_load1</text>"));
  EXPECT_THAT(svg, HasSubstr("time since the first invoke (ms; 1000.0 ms into the run)"));
  EXPECT_THAT(svg, HasSubstr("stroke-dasharray=\"4 2\"")) << "an unknown op is drawn apart";
  EXPECT_THAT(svg, HasSubstr(std::string("fill=\"") + kVermillion)) << "a failed op in its colour";
  EXPECT_EQ(html.find("<script"), std::string::npos) << "no JavaScript";
  EXPECT_EQ(html.find("<link"), std::string::npos) << "no external CSS";
  // Results written before the ops were kept: the list only, no empty chart.
  bad.history->anomaly_ops.clear();
  const std::string old_html = RenderHtml(Summarize({bad}), &bad);
  EXPECT_EQ(old_html.find("first history anomaly of"), std::string::npos);
  EXPECT_THAT(old_html, HasSubstr("served by n1 in term 3"));
}

}  // namespace
}  // namespace kvchaos::reports
