// MetricsRegistry renders the Prometheus text format: HELP and TYPE once per family, samples with
// escaped labels, cumulative histogram buckets ending in +Inf with _sum and _count.
// (python/tests/test_metrics.py runs promtool over a node's and a client's output.)
#include "core/common/metrics.h"

#include <gtest/gtest.h>

namespace kvchaos {
namespace {

TEST(MetricsRegistry, RendersCountersAndGaugesByFamily) {
  MetricsRegistry r;
  r.Add("kvchaos_requests_total", "Requests.", {{"route", "Get"}, {"code", "OK"}});
  r.Add("kvchaos_requests_total", "Requests.", {{"route", "Get"}, {"code", "OK"}}, 2);
  r.Add("kvchaos_requests_total", "Requests.", {{"route", "Put"}, {"code", "NotLeader"}});
  r.Set("kvchaos_is_leader", "1 when leading.", {}, 1);
  r.Set("kvchaos_is_leader", "1 when leading.", {}, 0);
  EXPECT_EQ(r.Render(),
            "# HELP kvchaos_is_leader 1 when leading.\n"
            "# TYPE kvchaos_is_leader gauge\n"
            "kvchaos_is_leader 0\n"
            "# HELP kvchaos_requests_total Requests.\n"
            "# TYPE kvchaos_requests_total counter\n"
            "kvchaos_requests_total{route=\"Get\",code=\"OK\"} 3\n"
            "kvchaos_requests_total{route=\"Put\",code=\"NotLeader\"} 1\n");
}

TEST(MetricsRegistry, EscapesLabelValuesAndHelp) {
  MetricsRegistry r;
  r.Set("m", "line one\nback\\slash", {{"path", "/a\"b\\c\nd"}}, 0.25);
  EXPECT_EQ(r.Render(),
            "# HELP m line one\\nback\\\\slash\n"
            "# TYPE m gauge\n"
            "m{path=\"/a\\\"b\\\\c\\nd\"} 0.25\n");
}

TEST(MetricsRegistry, HistogramBucketsAreCumulative) {
  MetricsRegistry r;
  const double bounds[] = {1, 10};
  for (double v : {0.5, 1.0, 5.0, 50.0}) r.Observe("lat_ms", "Latency.", {{"route", "x"}}, v, bounds);
  EXPECT_EQ(r.Render(),
            "# HELP lat_ms Latency.\n"
            "# TYPE lat_ms histogram\n"
            "lat_ms_bucket{route=\"x\",le=\"1\"} 2\n"
            "lat_ms_bucket{route=\"x\",le=\"10\"} 3\n"
            "lat_ms_bucket{route=\"x\",le=\"+Inf\"} 4\n"
            "lat_ms_sum{route=\"x\"} 56.5\n"
            "lat_ms_count{route=\"x\"} 4\n");
}

TEST(MetricsRegistry, CopyIntoKeepsTheSourceUnchanged) {
  MetricsRegistry kept;
  kept.Add("a_total", "A.", {});
  MetricsRegistry view;
  kept.CopyInto(view);
  view.Set("b", "B.", {}, 7);
  EXPECT_EQ(kept.Render(), "# HELP a_total A.\n# TYPE a_total counter\na_total 1\n");
  EXPECT_NE(view.Render().find("b 7\n"), std::string::npos) << view.Render();
}

TEST(MetricsRegistryDeathTest, ANameUsedWithTwoTypesIsABug) {
  MetricsRegistry r;
  r.Set("x", "X.", {}, 1);
  EXPECT_DEATH(r.Add("x", "X.", {}), "used with two types");
}

}  // namespace
}  // namespace kvchaos
