// GPU against CPU: the CUDA kernels must give the CPU reference's checksums bit for bit. These
// tests need a CUDA build and a device; elsewhere they skip and say which one is missing. The
// no-device behaviour itself (an explicit Unavailable, never a silent "no checksum") is tested
// everywhere.
#include "core/integrity/device_checksum.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/common/rng.h"
#include "core/integrity/tests/test_blocks.h"

namespace kvchaos::integrity {
namespace {

using testutil::OwnedBlock;

std::vector<std::unique_ptr<OwnedBlock>> RandomBlocks(Rng& rng, size_t n, size_t max_iovs, size_t max_size) {
  std::vector<std::unique_ptr<OwnedBlock>> blocks;
  for (size_t b = 0; b < n; ++b) {
    std::vector<std::string> iovs(1 + rng.Uniform(max_iovs));
    for (std::string& s : iovs) {
      s.resize(2 + rng.Uniform(max_size));
      for (char& c : s) c = static_cast<char>(rng.Uniform(256));
    }
    blocks.push_back(std::make_unique<OwnedBlock>(std::move(iovs)));
  }
  return blocks;
}

TEST(DeviceChecksum, WithoutADeviceComputeSaysUnavailable) {
  std::string why;
  if (DeviceChecksumAvailable(&why)) GTEST_SKIP() << "a CUDA device is present; this test covers its absence";
  EXPECT_FALSE(why.empty()) << "the reason must be given";
  OwnedBlock b({"abcd"});
  std::vector<Block> blocks{b.block()};
  Result<std::vector<int64_t>> r = ComputeHostBlocksOnDevice({ChecksumAlgo::kCrc64Full, 4}, blocks);
  ASSERT_FALSE(r.ok()) << "without a device the call must fail, not return checksums";
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
}

class DeviceVsCpu : public ::testing::TestWithParam<ChecksumAlgo> {
 protected:
  void SetUp() override {
    std::string why;
    if (!DeviceChecksumAvailable(&why)) GTEST_SKIP() << "GPU-vs-CPU comparison needs a CUDA device: " << why;
  }
};

TEST_P(DeviceVsCpu, MatchesTheCpuReferenceOnRandomBlocks) {
  Rng rng(42);
  for (size_t max_size : {16, 3000, 70000}) {
    auto owned = RandomBlocks(rng, 64, 8, max_size);
    std::vector<Block> blocks;
    for (const auto& b : owned) blocks.push_back(b->block());
    for (size_t width : {4, 8, 37}) {
      const ChecksumComputer::Options options{GetParam(), width};
      Result<std::vector<int64_t>> cpu = ChecksumComputer(options).Compute(blocks);
      Result<std::vector<int64_t>> gpu = ComputeHostBlocksOnDevice(options, blocks);
      ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
      ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
      ASSERT_EQ(*gpu, *cpu) << ChecksumAlgoName(GetParam()) << " max IOV size " << max_size << " width " << width;
    }
  }
}

TEST_P(DeviceVsCpu, MatchesGoldenVectors) {
  const std::string a(1024, 'a');
  OwnedBlock b0({"1234xxxxxxxx5678"}), b1({a, a, a, a}), b2({"12"});
  std::vector<Block> blocks{b0.block(), b1.block(), b2.block()};
  const ChecksumComputer::Options options{GetParam(), 4};
  Result<std::vector<int64_t>> gpu = ComputeHostBlocksOnDevice(options, blocks);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  if (GetParam() == ChecksumAlgo::kCrc32XorInt64) {
    EXPECT_EQ(*gpu, (std::vector<int64_t>{-7046029251787925820LL, 2206454465183425305LL, -7046029253055495966LL}));
  } else {
    EXPECT_EQ((*gpu)[1], 2949337439007406030LL);
  }
}

TEST_P(DeviceVsCpu, RejectsShortIovsLikeTheCpu) {
  if (GetParam() != ChecksumAlgo::kCrc32XorInt64) GTEST_SKIP() << "only crc32_xor_int64 has a minimum IOV size";
  OwnedBlock b({"ab", "x"});
  std::vector<Block> blocks{b.block()};
  EXPECT_EQ(ComputeHostBlocksOnDevice({GetParam(), 4}, blocks).status().code(), StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(BothAlgorithms, DeviceVsCpu,
                         ::testing::Values(ChecksumAlgo::kCrc32XorInt64, ChecksumAlgo::kCrc64Full),
                         [](const auto& param_info) { return std::string(ChecksumAlgoName(param_info.param)); });

}  // namespace
}  // namespace kvchaos::integrity
