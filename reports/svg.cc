// SVG writing and nice-axis arithmetic (see svg.h).
#include "reports/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "harness/junit_writer.h"

namespace kvchaos::reports {

std::string Num(double value, int decimals) {
  if (std::abs(value) < 1e-12) value = 0;  // no "-0"
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", std::clamp(decimals, 0, 9), value);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string Ms(double ms) {
  if (std::abs(ms) < 0.05) ms = 0;  // no "-0.0"
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f", ms);
  return buf;
}

std::string Axis::Label(double value) const {
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return Num(value, decimals);
}

Axis NiceAxis(double lo, double hi, int target_ticks) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, target_ticks);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / magnitude;
  const double nice = r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10;
  Axis axis;
  axis.step = nice * magnitude;
  axis.min = std::floor(lo / axis.step + 1e-9) * axis.step;
  axis.max = std::ceil(hi / axis.step - 1e-9) * axis.step;
  if (axis.max <= axis.min) axis.max = axis.min + axis.step;
  for (int i = 0;; ++i) {
    const double t = axis.min + i * axis.step;
    if (t > axis.max + axis.step * 1e-6 || i > 1000) break;
    axis.ticks.push_back(t);
  }
  return axis;
}

Svg::Svg(int width, int height, const std::string& title) : width_(width), height_(height) {
  body_ += "<title>" + harness::XmlEscape(title) + "</title>\n";
}

void Svg::Rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra) {
  body_ += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(std::max(0.0, w)) + "\" height=\"" +
           Num(std::max(0.0, h)) + "\" fill=\"" + fill + "\"" + (extra.empty() ? "" : " " + extra) + "/>\n";
}

void Svg::Line(double x1, double y1, double x2, double y2, const std::string& stroke, double width,
               const std::string& dash) {
  body_ += "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" + Num(y2) +
           "\" stroke=\"" + stroke + "\" stroke-width=\"" + Num(width) + "\"" +
           (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") + "/>\n";
}

void Svg::Polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke, double width) {
  std::string pts;
  for (const auto& [x, y] : points) pts += (pts.empty() ? "" : " ") + Num(x) + "," + Num(y);
  body_ += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + stroke + "\" stroke-width=\"" + Num(width) +
           "\" stroke-linejoin=\"round\"/>\n";
}

void Svg::Circle(double cx, double cy, double r, const std::string& fill) {
  body_ += "<circle cx=\"" + Num(cx) + "\" cy=\"" + Num(cy) + "\" r=\"" + Num(r) + "\" fill=\"" + fill + "\"/>\n";
}

void Svg::Text(double x, double y, const std::string& text, int size, const std::string& anchor,
               const std::string& extra) {
  body_ += "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" font-size=\"" + std::to_string(size) +
           "\" text-anchor=\"" + anchor + "\"" + (extra.empty() ? "" : " " + extra) + ">" + harness::XmlEscape(text) +
           "</text>\n";
}

std::string Svg::Finish() const {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width_) + "\" height=\"" +
         std::to_string(height_) + "\" viewBox=\"0 0 " + std::to_string(width_) + " " + std::to_string(height_) +
         "\" font-family=\"sans-serif\" role=\"img\">\n" + body_ + "</svg>\n";
}

}  // namespace kvchaos::reports
