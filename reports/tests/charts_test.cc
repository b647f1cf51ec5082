// The charts say what they show: titles, axis labels with units, a legend with the bound, the
// p99 marker at the right place, one histogram bar per occupied bin, a timeline row per node.
#include "reports/charts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "harness/tests/result_fixtures.h"

namespace kvchaos::reports {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ClassStats Stats(std::vector<double> values, std::optional<int64_t> bound) {
  harness::RunResult r = harness::testing::PassingRun();
  r.failovers.clear();
  r.failover_bound_ms = bound;
  for (double v : values) r.failovers.push_back({"leader-crash", 0, 0, 1, std::nullopt, std::nullopt, v, false});
  return Summarize({r}).classes.at(0);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// Tags open and close in order: a cheap well-formedness check for the SVG we write.
bool Balanced(const std::string& svg) {
  std::vector<std::string> stack;
  const std::regex tag("<(/?)([a-z]+)[^>]*?(/?)>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tag); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[2];
    if ((*it)[3] == "/") continue;
    if ((*it)[1] == "/") {
      if (stack.empty() || stack.back() != name) return false;
      stack.pop_back();
    } else {
      stack.push_back(name);
    }
  }
  return stack.empty();
}

TEST(Charts, CdfHasAxesWithUnitsLegendBoundAndP99) {
  const std::string svg = FailoverCdfSvg(Stats({1900, 2000, 2100, 2200, 2400}, 2500));
  EXPECT_TRUE(Balanced(svg)) << svg;
  EXPECT_THAT(svg, HasSubstr("leader-crash — failover time CDF (n = 5)"));
  EXPECT_THAT(svg, HasSubstr("failover time (ms, fault → new leader serving)"));
  EXPECT_THAT(svg, HasSubstr("fraction of failovers ≤ x"));
  EXPECT_THAT(svg, HasSubstr(">100%</text>"));
  EXPECT_THAT(svg, HasSubstr("bound 2500.0 ms"));
  EXPECT_THAT(svg, HasSubstr("bound (failover_p99_ms)"));
  EXPECT_THAT(svg, HasSubstr("p99 2400.0 ms"));
  EXPECT_EQ(Count(svg, "<polyline"), 1u);
}

TEST(Charts, WithoutABoundThereIsNoBoundLine) {
  const std::string svg = FailoverCdfSvg(Stats({10, 20}, std::nullopt));
  EXPECT_THAT(svg, Not(HasSubstr("bound")));
}

TEST(Charts, HistogramDrawsOneBarPerOccupiedBin) {
  const std::string svg = FailoverHistogramSvg(Stats({1000, 1001, 1002, 1500, 2000}, 2500));
  EXPECT_TRUE(Balanced(svg)) << svg;
  EXPECT_THAT(svg, HasSubstr("failovers per 50 ms bin"));
  EXPECT_THAT(svg, HasSubstr(">failovers</text>")) << "the y axis is labelled";
  EXPECT_EQ(Count(svg, "fill-opacity=\"0.85\""), 3u) << "bins 1000, 1500 and 2000";
  const std::string same = FailoverHistogramSvg(Stats({700, 700, 700}, std::nullopt));
  EXPECT_EQ(Count(same, "fill-opacity=\"0.85\""), 1u) << "identical samples still draw one bar";
  EXPECT_THAT(same, HasSubstr("failovers per 2 ms bin")) << "bins stay a readable width around a single value";
}

TEST(Charts, TimelineHasARowPerNodeSpansAndFaults) {
  const harness::RunResult run = harness::testing::PassingRun();
  const std::string svg = LeadershipTimelineSvg(run);
  EXPECT_TRUE(Balanced(svg)) << svg;
  EXPECT_THAT(svg, HasSubstr("Leadership timeline — leader-crash, seed 42"));
  for (const char* node : {">node 0<", ">node 1<", ">node 2<"}) EXPECT_THAT(svg, HasSubstr(node));
  EXPECT_THAT(svg, HasSubstr("time since the start of the run (s, true time)"));
  EXPECT_THAT(svg, HasSubstr("crash · leader (node 0)"));
  EXPECT_THAT(svg, HasSubstr("believes it leads"));
  EXPECT_THAT(svg, HasSubstr("accepts writes (acting leader)"));
  EXPECT_THAT(svg, HasSubstr(">120</text>")) << "the axis reaches the 120 s end of the run";
}

// Fault labels over a crowded timeline (a fault every 2 s, some with long targets, in no particular
// order) never overlap one another, and no label's mark runs through another label's text.
TEST(Charts, TimelineFaultLabelsNeverOverlap) {
  harness::RunResult run = harness::testing::PassingRun();
  run.faults.clear();
  for (int i = 19; i >= 0; --i) {
    const double at = 2000.0 * i + 1000;
    run.faults.push_back({i % 3 == 0 ? "coordination-outage" : "leader-pause",
                          i % 3 == 0 ? "coordination" : "leader (node " + std::to_string(i % 3) + ")", at, at + 1500});
  }
  const std::string svg = LeadershipTimelineSvg(run);
  EXPECT_TRUE(Balanced(svg)) << svg;
  struct Box {
    double x0, x1, y0, y1;
  };
  std::vector<Box> labels;
  const std::regex text(R"re(<text x="([0-9.]+)" y="([0-9.]+)" font-size="10"[^>]*>([^<]*)</text>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
    // 6 px per byte of UTF-8 ("·" counts twice): wider than the text renders (DejaVu Sans at 10 px
    // measured ~5 px per character in headless Chromium).
    labels.push_back({x, x + 6.0 * static_cast<double>((*it)[3].length()), y - 9, y + 2});
  }
  ASSERT_GE(labels.size(), 5u) << "three rows of labels should hold five of these";
  // Faults that start together under one label are counted, not stacked.
  harness::RunResult lossy = harness::testing::PassingRun();
  lossy.faults = {{"lossy-link", "leader", 20000, 40000}, {"lossy-link", "leader", 20000, 40000},
                  {"lossy-link", "leader", 20000, 40000}};
  const std::string lossy_svg = LeadershipTimelineSvg(lossy);
  EXPECT_EQ(Count(lossy_svg, "lossy-link · leader"), 1u) << lossy_svg;
  EXPECT_THAT(lossy_svg, HasSubstr("lossy-link · leader ×3"));
  for (size_t i = 0; i < labels.size(); ++i) {
    for (size_t j = i + 1; j < labels.size(); ++j) {
      const Box& a = labels[i];
      const Box& b = labels[j];
      const bool overlap = a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
      EXPECT_FALSE(overlap) << "labels at (" << a.x0 << "," << a.y0 << ") and (" << b.x0 << "," << b.y0 << ") overlap";
    }
  }
  const std::regex mark(R"re(<line x1="([0-9.]+)" y1="([0-9.]+)" x2="[0-9.]+" y2="([0-9.]+)" stroke="#b07a00")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), mark); it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]), y0 = std::stod((*it)[2]), y1 = std::stod((*it)[3]);
    for (const Box& b : labels) {
      const bool crosses = x > b.x0 && x < b.x1 && y0 < b.y1 && b.y0 < y1;
      EXPECT_FALSE(crosses) << "the mark at x=" << x << " runs through the label at (" << b.x0 << "," << b.y0 << ")";
    }
  }
}

}  // namespace
}  // namespace kvchaos::reports
