#include "core/common/units.h"

#include <gtest/gtest.h>

namespace kvchaos {
namespace {

using namespace std::chrono_literals;

TEST(UnitsTest, ParsesDurations) {
  EXPECT_EQ(*ParseDuration("250ms"), 250ms);
  EXPECT_EQ(*ParseDuration("10s"), 10s);
  EXPECT_EQ(*ParseDuration("10m"), 10min);
  EXPECT_EQ(*ParseDuration("1.5h"), 90min);
  EXPECT_EQ(*ParseDuration("40us"), 40us);
  EXPECT_EQ(*ParseDuration("100"), 100ms) << "a bare number is milliseconds";
  EXPECT_FALSE(ParseDuration("ten seconds").ok());
  EXPECT_FALSE(ParseDuration("10 parsecs").ok());
  EXPECT_FALSE(ParseDuration("-5s").ok());
}

TEST(UnitsTest, ParsesByteSizes) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("4KiB"), 4096u);
  EXPECT_EQ(*ParseByteSize("4MiB"), 4u << 20);
  EXPECT_EQ(*ParseByteSize("1GiB"), 1u << 30);
  EXPECT_EQ(*ParseByteSize("4KB"), 4000u);
  auto bad = ParseByteSize("4 lots");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'4 lots'"), std::string::npos);
  EXPECT_FALSE(ParseByteSize("0.5B").ok()) << "half a byte is not a size";
}

TEST(UnitsTest, FormatsForHumans) {
  EXPECT_EQ(FormatDuration(1500ms), "1.5s");
  EXPECT_EQ(FormatDuration(250ms), "250ms");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(4u << 20), "4.00 MiB");
}

}  // namespace
}  // namespace kvchaos
