// Golden vectors of REFERENCE.md for crc32_xor_int64 (bit-exact with upstream) and the defining
// vectors of crc64_full (computed independently with a bitwise CRC-64/XZ), plus the blind spots
// that crc64_full closes.
#include "core/integrity/checksum.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "core/integrity/tests/test_blocks.h"

namespace kvchaos::integrity {
namespace {

using testutil::Bytes;
using testutil::OwnedBlock;

int64_t Crc32Block(const std::vector<std::string>& iovs, size_t width) {
  OwnedBlock b(iovs);
  Result<int64_t> r = ComputeCrc32XorInt64(b.block(), width);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : 0;
}

int64_t Crc64Block(const std::vector<std::string>& iovs) {
  OwnedBlock b(iovs);
  return ComputeCrc64Full(b.block());
}

TEST(Crc32, ZlibGoldenVectors) {
  EXPECT_EQ(Crc32(Bytes("12345678")), 0x9AE0DAAFu);
  EXPECT_EQ(Crc32(Bytes("1234xxxxxxxx5678")), 0xDE28307Cu);
  EXPECT_EQ(Crc32(Bytes("12")), 0x4F5344CDu);
}

TEST(Crc32XorInt64, FoldRunningStatesMatchUpstream) {
  const uint32_t inputs[] = {0, 1, 0x9AE0DAAF, 0xFFFFFFFF};
  const int64_t states[] = {-7046029254386353131LL, -8366447769517737510LL, 0x6F5CAD4E83A46702LL,
                            0x0650CCBBB6B32E60LL};
  uint64_t h = 0;
  for (size_t i = 0; i < 4; ++i) {
    h = FoldCrc32(h, inputs[i]);
    EXPECT_EQ(static_cast<int64_t>(h), states[i]) << "after folding input " << i;
  }
}

TEST(Crc32XorInt64, BlockGoldenVectors) {
  EXPECT_EQ(Crc32Block({"1234xxxxxxxx5678"}, 4), -7046029251787925820LL);
  EXPECT_EQ(Crc32Block({"1234xxxxxxxx5678"}, 8), -7046029250659177327LL);
  const std::string a(1024, 'a');
  EXPECT_EQ(Crc32Block({a, a, a, a}, 4), 2206454465183425305LL);
  EXPECT_EQ(Crc32Block({"12"}, 4), -7046029253055495966LL);
}

TEST(Crc32XorInt64, KnownBlindSpotsOfTheSampledAlgorithm) {
  // Documented in REFERENCE.md: the middle is not sampled and the length is not bound in.
  EXPECT_EQ(Crc32Block({"abcdefgh"}, 4), Crc32Block({"abcdXefgh"}, 4));
  EXPECT_EQ(Crc32Block({"1234xxxxxxxx5678"}, 4), Crc32Block({"1234yyyyyyyy5678"}, 4));
}

TEST(Crc32XorInt64, RejectsIovsShorterThanTwoBytes) {
  OwnedBlock b({"abcd", "x"});
  Result<int64_t> r = ComputeCrc32XorInt64(b.block(), 4);
  ASSERT_FALSE(r.ok()) << "a 1-byte IOV must be rejected";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("IOV 1"), std::string::npos) << r.status().ToString();
}

TEST(Crc64Full, IsCrc64XzOfLengthPrefixedIovs) {
  EXPECT_EQ(Crc64Xz(0, Bytes("123456789")), 0x995DC9BBDF1939FAULL) << "CRC-64/XZ check value";
  EXPECT_EQ(Crc64Xz(Crc64Xz(0, Bytes("1234")), Bytes("56789")), 0x995DC9BBDF1939FAULL) << "continuation";
  EXPECT_EQ(Crc64Block({}), -5302298732530578752LL);
  EXPECT_EQ(Crc64Block({""}), 3683850728485256227LL);
  EXPECT_EQ(Crc64Block({"123456789"}), 6462064923810974792LL);
  EXPECT_EQ(Crc64Block({"1234xxxxxxxx5678", "12"}), -4247079827690873224LL);
  const std::string a(1024, 'a');
  EXPECT_EQ(Crc64Block({a, a, a, a}), 2949337439007406030LL);
}

TEST(Crc64Full, ClosesTheBlindSpotsOfTheSampledAlgorithm) {
  EXPECT_EQ(Crc64Block({"abcdefgh"}), 388862225708621267LL);
  EXPECT_EQ(Crc64Block({"abcdXefgh"}), -4587219899863853554LL);
  EXPECT_NE(Crc64Block({"1234xxxxxxxx5678"}), Crc64Block({"1234yyyyyyyy5678"}));
  // Moving a byte across an IOV boundary keeps the byte stream but changes the lengths.
  EXPECT_NE(Crc64Block({"abc", "def"}), Crc64Block({"abcd", "ef"}));
  EXPECT_NE(Crc64Block({"abc", ""}), Crc64Block({"abc"}));
}

TEST(ChecksumComputer, ComputesEveryBlockOrFailsNamingTheBlock) {
  OwnedBlock b0({"1234xxxxxxxx5678"});
  OwnedBlock b1({"12"});
  OwnedBlock bad({"1"});
  std::vector<Block> blocks{b0.block(), b1.block()};
  ChecksumComputer crc32({ChecksumAlgo::kCrc32XorInt64, 4});
  Result<std::vector<int64_t>> r = crc32.Compute(blocks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<int64_t>{-7046029251787925820LL, -7046029253055495966LL}));

  blocks.push_back(bad.block());
  r = crc32.Compute(blocks);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("block 2"), std::string::npos) << r.status().ToString();

  ChecksumComputer crc64({ChecksumAlgo::kCrc64Full, 4});
  r = crc64.Compute(blocks);
  ASSERT_TRUE(r.ok()) << "crc64_full accepts any IOV size: " << r.status().ToString();
  EXPECT_EQ((*r)[0], Crc64Block({"1234xxxxxxxx5678"}));

  ChecksumComputer none({ChecksumAlgo::kUnspecified, 4});
  EXPECT_EQ(none.Compute(blocks).status().code(), StatusCode::kInvalidArgument);
}

TEST(ChecksumAlgo, NamesRoundTrip) {
  for (ChecksumAlgo a : {ChecksumAlgo::kUnspecified, ChecksumAlgo::kCrc32XorInt64, ChecksumAlgo::kCrc64Full}) {
    ChecksumAlgo back{};
    ASSERT_TRUE(ChecksumAlgoFromName(ChecksumAlgoName(a), &back));
    EXPECT_EQ(back, a);
  }
  ChecksumAlgo out{};
  EXPECT_FALSE(ChecksumAlgoFromName("md5", &out));
}

class SampleWidthEnv : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv(kSampleWidthEnv); }
};

TEST_F(SampleWidthEnv, DefaultsToFourAndReadsTheVariable) {
  unsetenv(kSampleWidthEnv);
  ASSERT_TRUE(SampleWidthFromEnv().ok());
  EXPECT_EQ(*SampleWidthFromEnv(), 4u);
  setenv(kSampleWidthEnv, "8", 1);
  ASSERT_TRUE(SampleWidthFromEnv().ok());
  EXPECT_EQ(*SampleWidthFromEnv(), 8u);
}

TEST_F(SampleWidthEnv, RejectsValuesThatAreNotPositiveIntegers) {
  for (const char* bad : {"0", "-1", "four", "4k", ""}) {
    setenv(kSampleWidthEnv, bad, 1);
    Result<size_t> r = SampleWidthFromEnv();
    ASSERT_FALSE(r.ok()) << "'" << bad << "' must be rejected";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidConfig);
    EXPECT_NE(r.status().message().find(kSampleWidthEnv), std::string::npos) << r.status().ToString();
  }
}

}  // namespace
}  // namespace kvchaos::integrity
