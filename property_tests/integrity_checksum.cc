// Properties of the integrity module: crc64_full notices any single bit flip anywhere in a block
// and any change of an IOV's length; VerifyBatchChecksums pinpoints exactly the blocks that
// differ, catches any swap of two different blocks, and never compares an absent checksum.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <string>
#include <vector>

#include "core/integrity/checksum.h"
#include "core/integrity/verify.h"

namespace kvchaos::integrity {
namespace {

std::vector<Iov> Spans(const std::vector<std::string>& iovs) {
  std::vector<Iov> out;
  for (const std::string& s : iovs) out.emplace_back(reinterpret_cast<const std::byte*>(s.data()), s.size());
  return out;
}

int64_t Full(const std::vector<std::string>& iovs) {
  const std::vector<Iov> spans = Spans(iovs);
  return ComputeCrc64Full(spans);
}

rc::Gen<std::vector<std::string>> GenBlock() {
  return rc::gen::nonEmpty(rc::gen::container<std::vector<std::string>>(rc::gen::container<std::string>(rc::gen::arbitrary<char>())));
}

RC_GTEST_PROP(IntegrityProperties, Crc64FullCatchesAnySingleBitFlip, ()) {
  std::vector<std::string> block = *GenBlock();
  const int64_t before = Full(block);
  std::vector<size_t> nonempty;
  for (size_t i = 0; i < block.size(); ++i) {
    if (!block[i].empty()) nonempty.push_back(i);
  }
  RC_PRE(!nonempty.empty());
  const size_t iov = *rc::gen::elementOf(nonempty);
  const size_t byte = *rc::gen::inRange<size_t>(0, block[iov].size());
  const int bit = *rc::gen::inRange(0, 8);
  block[iov][byte] = static_cast<char>(block[iov][byte] ^ (1 << bit));
  RC_ASSERT(Full(block) != before);
}

RC_GTEST_PROP(IntegrityProperties, Crc64FullCatchesTruncationAndExtension, ()) {
  std::vector<std::string> block = *GenBlock();
  const int64_t before = Full(block);
  const size_t iov = *rc::gen::inRange<size_t>(0, block.size());
  if (!block[iov].empty() && *rc::gen::arbitrary<bool>()) {
    block[iov].resize(*rc::gen::inRange<size_t>(0, block[iov].size()));
  } else {
    block[iov] += *rc::gen::nonEmpty(rc::gen::container<std::string>(rc::gen::arbitrary<char>()));
  }
  RC_ASSERT(Full(block) != before);
}

RC_GTEST_PROP(IntegrityProperties, VerifyCatchesAnySwapOfTwoDifferentBlocks, (std::vector<int64_t> expected)) {
  RC_PRE(expected.size() >= 2);
  const size_t i = *rc::gen::inRange<size_t>(0, expected.size());
  const size_t j = *rc::gen::inRange<size_t>(0, expected.size());
  RC_PRE(expected[i] != expected[j]);
  std::vector<int64_t> actual = expected;
  std::swap(actual[i], actual[j]);
  Result<VerifyResult> r = VerifyBatchChecksums(expected, actual, VerifyStage::kReadOutput);
  RC_ASSERT(r.ok());
  RC_ASSERT(r->faulty == (std::vector<size_t>{std::min(i, j), std::max(i, j)}));
}

RC_GTEST_PROP(IntegrityProperties, VerifyReportsExactlyThePresentDifferences,
              (std::vector<std::tuple<int64_t, int64_t, bool, bool>> rows)) {
  std::vector<int64_t> e, a;
  std::vector<uint8_t> ep, ap;
  std::vector<size_t> want;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [x, y, px, py] = rows[i];
    e.push_back(x);
    // Make equality common enough to matter.
    a.push_back((i % 3 == 0) ? x : y);
    ep.push_back(px);
    ap.push_back(py);
    if (px && py && e.back() != a.back()) want.push_back(i);
  }
  Result<VerifyResult> r = VerifyBatchChecksums(e, a, VerifyStage::kReadOutput, ep, ap);
  RC_ASSERT(r.ok());
  RC_ASSERT(r->faulty == want);
  size_t both = 0;
  for (size_t i = 0; i < rows.size(); ++i) both += (ep[i] && ap[i]);
  RC_ASSERT(r->checked == both);
}

}  // namespace
}  // namespace kvchaos::integrity
