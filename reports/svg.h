// A minimal SVG writer and axis arithmetic for the report's charts, written here rather than
// pulled in so the HTML stays self-contained and the output byte-stable (numbers are printed with
// fixed precision, never locale-dependent).
#pragma once

#include <string>
#include <vector>

namespace kvchaos::reports {

// Linear axis with "nice" ticks (1, 2 or 5 × 10^k apart) covering [lo, hi].
struct Axis {
  double min = 0;
  double max = 1;
  double step = 1;
  std::vector<double> ticks;
  // Tick label: as many decimals as the step needs, no exponent ("0", "2.5", "1500").
  std::string Label(double value) const;
};
Axis NiceAxis(double lo, double hi, int target_ticks);

// "12.5", "3", "0.25": fixed notation with at most `decimals` decimals and no trailing zeros.
std::string Num(double value, int decimals = 2);
// Every time the report prints, in one precision: milliseconds with one decimal ("2101.5", "2500.0").
std::string Ms(double ms);
// What a cell shows where nothing applies (no bound set, no data plane measured): not 0.
inline constexpr const char* kNotApplicable = "–";

class Svg {
 public:
  Svg(int width, int height, const std::string& title);
  void Rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra = "");
  void Line(double x1, double y1, double x2, double y2, const std::string& stroke, double width = 1,
            const std::string& dash = "");
  void Polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke, double width);
  void Circle(double cx, double cy, double r, const std::string& fill);
  // anchor: start | middle | end.
  void Text(double x, double y, const std::string& text, int size = 12, const std::string& anchor = "start",
            const std::string& extra = "");
  std::string Finish() const;

 private:
  int width_;
  int height_;
  std::string body_;
};

}  // namespace kvchaos::reports
