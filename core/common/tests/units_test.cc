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
  EXPECT_EQ(*ParseByteSize("4K"), 4096u) << "K, M and G are binary, like KiB, MiB and GiB";
  EXPECT_EQ(*ParseByteSize("4M"), 4u << 20);
  auto bad = ParseByteSize("4 lots");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'4 lots'"), std::string::npos);
  EXPECT_FALSE(ParseByteSize("0.5B").ok()) << "half a byte is not a size";
}

// 4MB used to read as 4,000,000 bytes beside 4MiB = 4,194,304: the decimal suffixes are refused,
// and the message gives the binary spelling with its byte count.
TEST(UnitsTest, RefusesDecimalSuffixesAsAmbiguous) {
  for (const char* text : {"4KB", "4MB", "1GB", "4 MB"}) {
    auto r = ParseByteSize(text);
    ASSERT_FALSE(r.ok()) << text << " was accepted as " << *r;
    EXPECT_NE(r.status().message().find("is ambiguous"), std::string::npos) << r.status().ToString();
  }
  EXPECT_EQ(ParseByteSize("4MB").status().message(),
            "'4MB' is ambiguous: write 4MiB (4194304 bytes) for binary units, or the number of bytes for decimal ones");
}

TEST(UnitsTest, RefusesDurationsPastOneHundredYears) {
  EXPECT_EQ(*ParseDuration("876000h"), kMaxDuration);
  auto big = ParseDuration("876001h");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("too large (at most 100 years)"), std::string::npos);
  EXPECT_FALSE(ParseDuration("9223372036855").ok()) << "ms past what a nanosecond Duration holds";
}

TEST(UnitsTest, ByteSizesAreExactAndFitAFileOffset) {
  EXPECT_EQ(*ParseByteSize("9007199254740993"), 9007199254740993u) << "a double would round this to ...992";
  EXPECT_EQ(*ParseByteSize("9223372036854775807"), kMaxByteSize);
  EXPECT_FALSE(ParseByteSize("9223372036854775808").ok());
  EXPECT_FALSE(ParseByteSize("18446744073709551616").ok()) << "past uint64";
  EXPECT_FALSE(ParseByteSize("9000000000GiB").ok()) << "the multiplication overflows";
  EXPECT_EQ(*ParseByteSize("1.5KiB"), 1536u);
  EXPECT_EQ(*ParseByteSize("4 KiB"), 4096u);
}

TEST(UnitsTest, FormatsForHumans) {
  EXPECT_EQ(FormatDuration(1500ms), "1.5s");
  EXPECT_EQ(FormatDuration(250ms), "250ms");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(4u << 20), "4.00 MiB");
}

}  // namespace
}  // namespace kvchaos
