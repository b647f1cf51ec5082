// Axis arithmetic and SVG text output: nice ticks cover the data, labels carry no exponents or
// trailing zeros, and text is escaped.
#include "reports/svg.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvchaos::reports {
namespace {

using ::testing::HasSubstr;

TEST(NiceAxis, TicksAreOneTwoOrFiveTimesAPowerOfTenAndCoverTheRange) {
  const Axis a = NiceAxis(1873, 2544, 6);
  EXPECT_EQ(a.step, 100);
  EXPECT_EQ(a.min, 1800);
  EXPECT_EQ(a.max, 2600);
  EXPECT_EQ(a.ticks.front(), 1800);
  EXPECT_EQ(a.ticks.back(), 2600);
  EXPECT_EQ(a.ticks.size(), 9u);
  const Axis fraction = NiceAxis(0, 1, 4);
  EXPECT_DOUBLE_EQ(fraction.step, 0.2);
  EXPECT_EQ(fraction.Label(fraction.ticks[3]), "0.6");
  EXPECT_EQ(NiceAxis(0, 0.1, 4).Label(0.04), "0.04") << "labels keep the decimals the step needs";
  const Axis flat = NiceAxis(5, 5, 4);
  EXPECT_GT(flat.max, flat.min) << "a single value still gets a usable axis";
}

TEST(NiceAxis, LabelsUseFixedNotation) {
  EXPECT_EQ(NiceAxis(0, 600000, 6).Label(500000), "500000");
  EXPECT_EQ(Num(2101.5, 1), "2101.5");
  EXPECT_EQ(Num(3.0, 2), "3");
  EXPECT_EQ(Num(-0.0000001, 2), "0");
}

TEST(Svg, EscapesTextAndClosesTheDocument) {
  Svg svg(100, 50, "a <b> & c");
  svg.Text(1, 2, "x < y & z");
  const std::string out = svg.Finish();
  EXPECT_THAT(out, HasSubstr("<title>a &lt;b&gt; &amp; c</title>"));
  EXPECT_THAT(out, HasSubstr(">x &lt; y &amp; z</text>"));
  EXPECT_THAT(out, HasSubstr("viewBox=\"0 0 100 50\""));
  EXPECT_EQ(out.substr(out.size() - 7), "</svg>\n");
}

}  // namespace
}  // namespace kvchaos::reports
