// Chart drawing (see charts.h). Layout constants are in pixels of the SVG viewBox.
#include "reports/charts.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/svg.h"

namespace kvchaos::reports {
namespace {

constexpr int kWidth = 560;
constexpr int kHeight = 360;
constexpr double kLeft = 70, kRight = 20, kTop = 40, kBottom = 76;

struct Frame {
  double left, top, width, height;
  Axis x, y;
  double X(double v) const { return left + (v - x.min) / (x.max - x.min) * width; }
  double Y(double v) const { return top + height - (v - y.min) / (y.max - y.min) * height; }
};

void DrawFrame(Svg& svg, const Frame& f, const std::string& x_label, const std::string& y_label, bool y_percent) {
  svg.Rect(f.left, f.top, f.width, f.height, "#ffffff", "stroke=\"#444\" stroke-width=\"1\"");
  for (double t : f.x.ticks) {
    const double x = f.X(t);
    svg.Line(x, f.top, x, f.top + f.height, "#e4e4e4");
    svg.Line(x, f.top + f.height, x, f.top + f.height + 5, "#444");
    svg.Text(x, f.top + f.height + 18, f.x.Label(t), 11, "middle");
  }
  for (double t : f.y.ticks) {
    const double y = f.Y(t);
    svg.Line(f.left, y, f.left + f.width, y, "#e4e4e4");
    svg.Line(f.left - 5, y, f.left, y, "#444");
    svg.Text(f.left - 8, y + 4, y_percent ? Num(t * 100, 0) + "%" : f.y.Label(t), 11, "end");
  }
  svg.Rect(f.left, f.top, f.width, f.height, "none", "stroke=\"#444\" stroke-width=\"1\"");
  svg.Text(f.left + f.width / 2, f.top + f.height + 40, x_label, 12, "middle");
  const double cy = f.top + f.height / 2;
  svg.Text(18, cy, y_label, 12, "middle", "transform=\"rotate(-90 18 " + Num(cy) + ")\"");
}

struct LegendEntry {
  std::string label;
  std::string color;
  enum Kind { kLine, kDashed, kBox, kDot } kind;
};

// A row of legend entries under the x-axis label, outside the plot, so it never hides data.
void DrawLegend(Svg& svg, double x, double y, const std::vector<LegendEntry>& entries) {
  for (const LegendEntry& e : entries) {
    switch (e.kind) {
      case LegendEntry::kLine: svg.Line(x, y - 4, x + 18, y - 4, e.color, 2); break;
      case LegendEntry::kDashed: svg.Line(x, y - 4, x + 18, y - 4, e.color, 2, "6 3"); break;
      case LegendEntry::kBox: svg.Rect(x + 2, y - 9, 14, 10, e.color); break;
      case LegendEntry::kDot: svg.Circle(x + 9, y - 4, 4, e.color); break;
    }
    svg.Text(x + 24, y, e.label, 11);
    x += 24 + static_cast<double>(e.label.size()) * 6.0 + 18;
  }
}

// The x range of a class's charts: all samples and the bound, with a little air either side.
std::pair<double, double> FailoverRange(const ClassStats& c) {
  double lo = c.failover_ms.front();
  double hi = c.failover_ms.back();
  if (c.bound_ms) {
    lo = std::min(lo, static_cast<double>(*c.bound_ms));
    hi = std::max(hi, static_cast<double>(*c.bound_ms));
  }
  const double air = std::max((hi - lo) * 0.06, std::max(1.0, hi * 0.01));
  return {std::max(0.0, lo - air), hi + air};
}

void DrawBound(Svg& svg, const Frame& f, const ClassStats& c, bool label_at_bottom) {
  if (!c.bound_ms) return;
  const double x = f.X(static_cast<double>(*c.bound_ms));
  svg.Line(x, f.top, x, f.top + f.height, kVermillion, 2, "6 3");
  svg.Text(x - 4, label_at_bottom ? f.top + f.height - 8 : f.top + 14, "bound " + Ms(static_cast<double>(*c.bound_ms)) + " ms", 11, "end",
           "fill=\"" + std::string(kVermillion) + "\"");
}

// The time axis of a timeline chart: a grid line per tick down the plot, the tick and its label below.
void DrawTimeAxis(Svg& svg, const Frame& f, double top, double plot_height) {
  for (double t : f.x.ticks) {
    if (t > f.x.max) break;
    const double x = f.X(t);
    svg.Line(x, top, x, top + plot_height, "#e4e4e4");
    svg.Line(x, top + plot_height, x, top + plot_height + 5, "#444");
    svg.Text(x, top + plot_height + 18, f.x.Label(t), 11, "middle");
  }
}

}  // namespace

std::string FailoverCdfSvg(const ClassStats& c) {
  Svg svg(kWidth, kHeight, c.fault_class + ": failover time CDF");
  svg.Text(kWidth / 2.0, 22, c.fault_class + " — failover time CDF (n = " + std::to_string(c.failover_ms.size()) + ")",
           14, "middle", "font-weight=\"bold\"");
  const auto [lo, hi] = FailoverRange(c);
  Frame f{kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom, NiceAxis(lo, hi, 6), NiceAxis(0, 1, 4)};
  DrawFrame(svg, f, "failover time (ms, fault → new leader serving)", "fraction of failovers ≤ x", true);
  // Empirical CDF as steps: flat at i/n until the (i+1)-th sample, then up.
  std::vector<std::pair<double, double>> points{{f.X(f.x.min), f.Y(0)}};
  const double n = static_cast<double>(c.failover_ms.size());
  for (size_t i = 0; i < c.failover_ms.size(); ++i) {
    const double x = f.X(c.failover_ms[i]);
    points.emplace_back(x, f.Y(static_cast<double>(i) / n));
    points.emplace_back(x, f.Y(static_cast<double>(i + 1) / n));
  }
  points.emplace_back(f.X(f.x.max), f.Y(1));
  svg.Polyline(points, kBlue, 2);
  // Below a CDF, right of its samples, is always empty: the bound's label goes there.
  DrawBound(svg, f, c, /*label_at_bottom=*/true);
  svg.Circle(f.X(c.p99), f.Y(0.99), 4.5, kOrange);
  std::vector<LegendEntry> legend{{"failover time CDF", kBlue, LegendEntry::kLine},
                                  {"p99 " + Ms(c.p99) + " ms", kOrange, LegendEntry::kDot}};
  if (c.bound_ms) legend.push_back({"bound (failover_p99_ms)", kVermillion, LegendEntry::kDashed});
  DrawLegend(svg, f.left - 40, kHeight - 10, legend);
  return svg.Finish();
}

std::string FailoverHistogramSvg(const ClassStats& c) {
  Svg svg(kWidth, kHeight, c.fault_class + ": failover time histogram");
  svg.Text(kWidth / 2.0, 22, c.fault_class + " — failover time histogram", 14, "middle", "font-weight=\"bold\"");
  const auto [lo, hi] = FailoverRange(c);
  // Bins of a nice width over the samples; the axis also reaches the bound.
  // At least 5% of the value wide (or 1 ms), so a single repeated value does not draw a hairline.
  const double span = std::max(c.failover_ms.back() - c.failover_ms.front(), std::max(1.0, c.failover_ms.back() * 0.05));
  const Axis bins = NiceAxis(c.failover_ms.front(), c.failover_ms.front() + span, 16);
  std::map<int64_t, int64_t> counts;
  int64_t most = 0;
  for (double v : c.failover_ms) {
    const auto bin = static_cast<int64_t>(std::floor((v - bins.min) / bins.step));
    most = std::max(most, ++counts[bin]);
  }
  // The axis spans the samples, the bound and the occupied bins only, like the CDF beside it.
  const double last_bin_end = bins.min + static_cast<double>(counts.rbegin()->first + 1) * bins.step;
  const Axis x = NiceAxis(std::min(lo, bins.min + static_cast<double>(counts.begin()->first) * bins.step),
                          std::max(hi, last_bin_end), 6);
  Frame f{kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom, x,
          NiceAxis(0, static_cast<double>(std::max<int64_t>(most, 1)) * 1.15, 5)};
  if (f.y.step < 1) f.y = NiceAxis(0, std::max<double>(5, static_cast<double>(most)), 5);  // whole counts only
  DrawFrame(svg, f, "failover time (ms)", "failovers", false);
  for (const auto& [bin, count] : counts) {
    const double x0 = f.X(bins.min + static_cast<double>(bin) * bins.step);
    const double x1 = f.X(bins.min + static_cast<double>(bin + 1) * bins.step);
    svg.Rect(x0 + 0.5, f.Y(static_cast<double>(count)), std::max(1.0, x1 - x0 - 1), f.Y(0) - f.Y(static_cast<double>(count)),
             kBlue, "fill-opacity=\"0.85\"");
  }
  DrawBound(svg, f, c, /*label_at_bottom=*/false);
  std::vector<LegendEntry> legend{{"failovers per " + bins.Label(bins.step) + " ms bin", kBlue, LegendEntry::kBox}};
  if (c.bound_ms) legend.push_back({"bound (failover_p99_ms)", kVermillion, LegendEntry::kDashed});
  DrawLegend(svg, f.left - 40, kHeight - 10, legend);
  return svg.Finish();
}

std::string LeadershipTimelineSvg(const harness::RunResult& run) {
  constexpr double kRow = 30;
  constexpr int kTimelineWidth = 980;
  const int nodes = std::max(run.nodes, 1);
  const double top = 86;
  const double plot_height = kRow * nodes;
  const int height = static_cast<int>(top + plot_height + 64);
  Svg svg(kTimelineWidth, height, "leadership timeline of " + run.scenario_name + " seed " + std::to_string(run.seed));
  svg.Text(kTimelineWidth / 2.0, 22,
           "Leadership timeline — " + run.scenario_name + ", seed " + std::to_string(run.seed) +
               (run.passed() ? "" : " (FAILED)"),
           14, "middle", "font-weight=\"bold\"");
  const double left = 70;
  const double width = kTimelineWidth - left - 20;
  const double end_s = std::max(run.duration_ms, 1.0) / 1000.0;
  Frame f{left, top, width, plot_height, NiceAxis(0, end_s, 10), NiceAxis(0, 1, 1)};
  f.x.max = std::max(f.x.max, end_s);
  // Fault windows first, under everything else. Their labels go in three rows above the plot,
  // each at the first row where it clears the row's previous label (widths are over-estimated:
  // 6 px per character at 10 px, wider than DejaVu Sans, so labels never touch); a label that fits
  // no row is left out (its band stays; the legend says what bands are). A label's mark stays in
  // its own row, except the lowest row's, which reaches the plot: nothing is drawn across a label.
  constexpr int kLabelRows = 3;
  constexpr double kRowStep = 14;
  std::vector<const harness::AppliedFault*> by_start;
  for (const harness::AppliedFault& fault : run.faults) by_start.push_back(&fault);
  std::stable_sort(by_start.begin(), by_start.end(),
                   [](const auto* a, const auto* b) { return a->start_ms < b->start_ms; });
  // Faults that start together under one label (a lossy link to each follower) get one label
  // with their count.
  struct Label {
    double x0;
    std::string text;
    int count;
  };
  std::vector<Label> labels;
  for (const harness::AppliedFault* fault : by_start) {
    const double x0 = f.X(fault->start_ms / 1000.0);
    const double x1 = fault->end_ms ? f.X(*fault->end_ms / 1000.0) : x0 + 2;
    svg.Rect(x0, top, std::max(2.0, x1 - x0), plot_height, kOrange, "fill-opacity=\"0.25\"");
    const std::string text = fault->fault_class + " · " + fault->target;
    if (!labels.empty() && labels.back().text == text && x0 - labels.back().x0 < 1) {
      ++labels.back().count;
    } else {
      labels.push_back({x0, text, 1});
    }
  }
  double row_end[kLabelRows];
  std::fill(std::begin(row_end), std::end(row_end), -1e9);
  for (const Label& l : labels) {
    const std::string label = l.count > 1 ? l.text + " ×" + std::to_string(l.count) : l.text;
    const double label_width = static_cast<double>(label.size()) * 6.0 + 4;
    for (int row = 0; row < kLabelRows; ++row) {  // row 0 is the lowest, next to the plot
      if (l.x0 <= row_end[row] + 8 || l.x0 + label_width > kTimelineWidth) continue;
      const double baseline = top - 8 - kRowStep * row;
      svg.Text(l.x0 + 3, baseline, label, 10);
      svg.Line(l.x0, baseline - 9, l.x0, row == 0 ? top : baseline + 2, "#b07a00", 1);
      row_end[row] = l.x0 + label_width;
      break;
    }
  }
  svg.Rect(left, top, width, plot_height, "none", "stroke=\"#444\" stroke-width=\"1\"");
  DrawTimeAxis(svg, f, top, plot_height);
  svg.Text(left + width / 2, top + plot_height + 38, "time since the start of the run (s, true time)", 12, "middle");
  for (int n = 0; n < nodes; ++n) {
    const double cy = top + kRow * n + kRow / 2;
    svg.Text(left - 8, cy + 4, "node " + std::to_string(n), 12, "end");
    if (n > 0) svg.Line(left, top + kRow * n, left + width, top + kRow * n, "#cccccc");
  }
  for (const harness::LeadershipSpan& s : run.leadership) {
    if (s.node < 0 || s.node >= nodes) continue;
    const double cy = top + kRow * s.node + kRow / 2;
    const double x0 = f.X(s.start_ms / 1000.0);
    const double x1 = f.X(s.end_ms / 1000.0);
    if (s.acting) {
      svg.Rect(x0, cy - 4, std::max(1.0, x1 - x0), 8, kBlue);
    } else {
      svg.Rect(x0, cy - 9, std::max(1.0, x1 - x0), 18, kSky, "fill-opacity=\"0.45\"");
    }
  }
  // The legend sits under the axis label so it never covers a bar.
  const double ly = top + plot_height + 46;
  svg.Rect(left, ly, 14, 10, kSky, "fill-opacity=\"0.45\"");
  svg.Text(left + 20, ly + 9, "believes it leads", 11);
  svg.Rect(left + 150, ly + 1, 14, 8, kBlue);
  svg.Text(left + 170, ly + 9, "accepts writes (acting leader)", 11);
  svg.Rect(left + 370, ly, 14, 10, kOrange, "fill-opacity=\"0.25\"");
  svg.Text(left + 390, ly + 9, "fault window", 11);
  return svg.Finish();
}

std::string AnomalyTimelineSvg(const std::string& scenario, const std::string& key,
                               const std::vector<harness::AnomalyOp>& ops) {
  if (ops.empty()) return "";
  constexpr int kChartWidth = 980;
  constexpr double kSubRow = 34;       // a label line over a bar
  constexpr double kCharWidth = 6.0;   // at 10 px: over-estimated, so labels never touch
  const double left = 110;
  const double width = kChartWidth - left - 20;
  double t0 = ops.front().invoke_ms;
  double t1 = ops.front().complete_ms;
  for (const harness::AnomalyOp& op : ops) {
    t0 = std::min(t0, op.invoke_ms);
    t1 = std::max(t1, op.complete_ms);
  }
  const double span = std::max(t1 - t0, 1e-3);
  Frame f{left, 0, width, 0, NiceAxis(0, span, 8), NiceAxis(0, 1, 1)};
  f.x.max = std::max(f.x.max, span);
  auto label_of = [](const harness::AnomalyOp& op) {
    std::string text = op.op;
    if (!op.value.empty()) text += " " + op.value;
    if (!op.node.empty()) text += " · " + op.node;
    if (op.term >= 0) text += " t" + std::to_string(op.term);
    if (op.outcome != "ok") text += " (" + op.outcome + ")";
    return text;
  };
  // Lanes in order of each client's first op; within a lane, an op takes the first sub-row where
  // its bar and label start after everything drawn there so far.
  struct Placed {
    const harness::AnomalyOp* op;
    int lane;
    int sub_row;
  };
  std::vector<std::string> clients;
  std::vector<std::vector<double>> row_ends;  // per lane, per sub-row: the rightmost pixel used
  std::vector<const harness::AnomalyOp*> by_invoke;
  for (const harness::AnomalyOp& op : ops) by_invoke.push_back(&op);
  std::stable_sort(by_invoke.begin(), by_invoke.end(),
                   [](const auto* a, const auto* b) { return a->invoke_ms < b->invoke_ms; });
  std::vector<Placed> placed;
  for (const harness::AnomalyOp* op : by_invoke) {
    auto it = std::find(clients.begin(), clients.end(), op->client);
    const int lane = static_cast<int>(it - clients.begin());
    if (it == clients.end()) {
      clients.push_back(op->client);
      row_ends.emplace_back();
    }
    const double x0 = f.X(op->invoke_ms - t0);
    const double end = std::max(f.X(op->complete_ms - t0), x0 + static_cast<double>(label_of(*op).size()) * kCharWidth);
    std::vector<double>& rows = row_ends[static_cast<size_t>(lane)];
    size_t row = 0;
    while (row < rows.size() && x0 <= rows[row] + 6) ++row;
    if (row == rows.size()) rows.push_back(end);
    rows[row] = end;
    placed.push_back({op, lane, static_cast<int>(row)});
  }
  std::vector<double> lane_top;
  double y = 56;
  for (const std::vector<double>& rows : row_ends) {
    lane_top.push_back(y);
    y += kSubRow * static_cast<double>(rows.size()) + 8;
  }
  const double top = 56;
  const double plot_height = y - top;
  const int height = static_cast<int>(top + plot_height + 70);
  Svg svg(kChartWidth, height, "history anomaly of key " + key + " in " + scenario);
  svg.Text(kChartWidth / 2.0, 22, "Key " + key + " — first history anomaly of " + scenario, 14, "middle",
           "font-weight=\"bold\"");
  svg.Rect(left, top, width, plot_height, "#ffffff", "stroke=\"#444\" stroke-width=\"1\"");
  DrawTimeAxis(svg, f, top, plot_height);
  svg.Text(left + width / 2, top + plot_height + 38,
           "time since the first invoke (ms; " + Ms(t0) + " ms into the run)", 12, "middle");
  for (size_t lane = 0; lane < clients.size(); ++lane) {
    if (lane > 0) svg.Line(left, lane_top[lane] - 4, left + width, lane_top[lane] - 4, "#cccccc");
    svg.Text(left - 8, lane_top[lane] + 24, clients[lane], 12, "end");
  }
  for (const Placed& p : placed) {
    const harness::AnomalyOp& op = *p.op;
    const double row_y = lane_top[static_cast<size_t>(p.lane)] + kSubRow * p.sub_row;
    const double x0 = f.X(op.invoke_ms - t0);
    const double x1 = f.X(op.complete_ms - t0);
    const std::string fill = op.outcome == "ok" ? kGreen : op.outcome == "failed" ? kVermillion : kOrange;
    // An unknown op may take effect any time after its invoke: a hatched-looking open bar.
    const std::string extra = op.outcome == "unknown"
                                  ? "fill-opacity=\"0.35\" stroke=\"#b07a00\" stroke-dasharray=\"4 2\""
                                  : "";
    svg.Rect(x0, row_y + 16, std::max(2.0, x1 - x0), 12, fill, extra);
    // A label that would run off the right edge ends at its bar's end instead.
    const std::string label = label_of(op);
    if (x0 + static_cast<double>(label.size()) * kCharWidth > kChartWidth - 4) {
      svg.Text(std::max(x1, x0 + 2), row_y + 12, label, 10, "end");
    } else {
      svg.Text(x0, row_y + 12, label, 10);
    }
  }
  const double ly = top + plot_height + 48;
  svg.Rect(left, ly, 14, 10, kGreen);
  svg.Text(left + 20, ly + 9, "ok", 11);
  svg.Rect(left + 60, ly, 14, 10, kVermillion);
  svg.Text(left + 80, ly + 9, "failed", 11);
  svg.Rect(left + 140, ly, 14, 10, kOrange, "fill-opacity=\"0.35\" stroke=\"#b07a00\" stroke-dasharray=\"4 2\"");
  svg.Text(left + 160, ly + 9, "unknown (may have applied)", 11);
  svg.Text(left + 340, ly + 9, "label: op, value written or read, · node, t term", 11);
  return svg.Finish();
}

}  // namespace kvchaos::reports
