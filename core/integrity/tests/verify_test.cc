// Per-block batch verification: the historical blind spots of aggregate compares (block swap,
// same-delta paired mutation, two bit-63 flips) must all be caught and pinpointed; presence flags
// make 0 a legal checksum and "absent" a skip.
#include "core/integrity/verify.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <vector>

#include "core/common/rng.h"

namespace kvchaos::integrity {
namespace {

std::vector<size_t> Faulty(const std::vector<int64_t>& e, const std::vector<int64_t>& a,
                           const std::vector<uint8_t>& ep = {}, const std::vector<uint8_t>& ap = {}) {
  Result<VerifyResult> r = VerifyBatchChecksums(e, a, VerifyStage::kReadOutput, ep, ap);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->faulty : std::vector<size_t>{};
}

TEST(VerifyBatchChecksums, AllEqualIsOk) {
  const std::vector<int64_t> e{1, 2, 3, 0, -5};
  Result<VerifyResult> r = VerifyBatchChecksums(e, e, VerifyStage::kReadOutput);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->checked, 5u);
  EXPECT_EQ(r->stage, VerifyStage::kReadOutput);
}

TEST(VerifyBatchChecksums, CatchesTwoEntriesWhoseBit63BothFlip) {
  // Defeats the odd-multiplier XOR aggregate: each product keeps the flip in bit 63, two cancel.
  const int64_t bit63 = static_cast<int64_t>(uint64_t{1} << 63);
  const std::vector<int64_t> e{11, 22, 33, 44};
  const std::vector<int64_t> a{11, 22 ^ bit63, 33, 44 ^ bit63};
  EXPECT_EQ(Faulty(e, a), (std::vector<size_t>{1, 3}));
}

TEST(VerifyBatchChecksums, CatchesABlockSwap) {
  // Defeats a plain XOR aggregate: the same values in another order.
  EXPECT_EQ(Faulty({100, 200, 300}, {100, 300, 200}), (std::vector<size_t>{1, 2}));
}

TEST(VerifyBatchChecksums, CatchesSameDeltaPairedMutations) {
  const int64_t d = 0x5a5a;
  EXPECT_EQ(Faulty({7, 9, 13}, {7 ^ d, 9 ^ d, 13}), (std::vector<size_t>{0, 1}));
}

TEST(VerifyBatchChecksums, ZeroIsALegalChecksumAndAbsentMeansSkip) {
  // Expected 0 present, actual 5: a mismatch (upstream's 0-sentinel would have skipped it).
  EXPECT_EQ(Faulty({0, 1}, {5, 1}, {1, 1}, {1, 1}), (std::vector<size_t>{0}));
  // Absent on either side: not compared, not counted.
  Result<VerifyResult> r = VerifyBatchChecksums(std::vector<int64_t>{0, 1, 2}, std::vector<int64_t>{5, 9, 2},
                                                VerifyStage::kMetaRoundTrip, std::vector<uint8_t>{0, 1, 1},
                                                std::vector<uint8_t>{1, 0, 1});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->checked, 1u);
}

TEST(VerifyBatchChecksums, LengthDisagreementIsAnError) {
  Result<VerifyResult> r = VerifyBatchChecksums(std::vector<int64_t>{1, 2}, std::vector<int64_t>{1},
                                                VerifyStage::kReadOutput);
  ASSERT_FALSE(r.ok()) << "a short actual list must not read as 'all fine'";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(VerifyBatchChecksums(std::vector<int64_t>{1}, std::vector<int64_t>{1}, VerifyStage::kReadOutput,
                                    std::vector<uint8_t>{1, 1})
                   .ok());
}

TEST(VerifyBatchChecksums, PinpointsEveryFaultInLargeBatches) {
  Rng rng(3);
  for (size_t n : {1, 63, 64, 65, 4096, 5000}) {
    std::vector<int64_t> e(n), a(n);
    std::vector<uint8_t> ep(n), ap(n);
    std::vector<size_t> want;
    for (size_t i = 0; i < n; ++i) {
      e[i] = a[i] = static_cast<int64_t>(rng.NextU64());
      ep[i] = rng.Bernoulli(0.9);
      ap[i] = rng.Bernoulli(0.9);
      if (rng.Bernoulli(0.01)) {
        a[i] ^= static_cast<int64_t>(uint64_t{1} << rng.Uniform(64));
        if (ep[i] && ap[i]) want.push_back(i);
      }
    }
    ASSERT_EQ(Faulty(e, a, ep, ap), want) << "batch of " << n;
  }
}

TEST(StrictModeEnv, AcceptsCompatibleValuesAndNamesTheVariableOtherwise) {
  unsetenv(kStrictModeEnv);
  EXPECT_TRUE(CheckStrictModeEnv().ok());
  setenv(kStrictModeEnv, "1", 1);
  EXPECT_TRUE(CheckStrictModeEnv().ok());
  setenv(kStrictModeEnv, "yes", 1);
  Status s = CheckStrictModeEnv();
  EXPECT_EQ(s.code(), StatusCode::kInvalidConfig);
  EXPECT_NE(s.message().find(kStrictModeEnv), std::string::npos) << s.ToString();
  unsetenv(kStrictModeEnv);
}

}  // namespace
}  // namespace kvchaos::integrity
