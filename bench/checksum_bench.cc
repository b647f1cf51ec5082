// Checksum throughput: kvchaos's crc64_full and crc32_xor_int64 against the raw libraries they
// sit on (isa-l crc64_ecma_refl, zlib crc32) on 4 KiB, 256 KiB and 4 MiB buffers, and the time
// to verify a batch of 4096 block checksums. Targets (issue 4): crc64_full >= 0.9x isa-l raw and
// >= 5x zlib on >= 256 KiB; verify of 4096 blocks <= 2 us. With CUDA and a device, the GPU path
// is measured too (ComputeHostBlocksOnDevice: includes the host-to-device copy).
#include <benchmark/benchmark.h>
#include <isa-l/crc64.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/rng.h"
#include "core/integrity/checksum.h"
#include "core/integrity/device_checksum.h"
#include "core/integrity/verify.h"

namespace {

using namespace kvchaos;
using namespace kvchaos::integrity;

std::vector<std::byte> RandomBuffer(size_t n) {
  Rng rng(n);
  std::vector<std::byte> buf(n);
  for (auto& b : buf) b = static_cast<std::byte>(rng.NextU64());
  return buf;
}

void Sizes(benchmark::internal::Benchmark* b) { b->Arg(4 << 10)->Arg(256 << 10)->Arg(4 << 20); }

void BM_IsalCrc64Raw(benchmark::State& state) {
  const auto buf = RandomBuffer(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(crc64_ecma_refl(0, reinterpret_cast<const unsigned char*>(buf.data()), buf.size()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_IsalCrc64Raw)->Apply(Sizes);

void BM_ZlibCrc32(benchmark::State& state) {
  const auto buf = RandomBuffer(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(crc32(0, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(buf.size())));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_ZlibCrc32)->Apply(Sizes);

// One block with one IOV of the given size.
void BM_Crc64Full(benchmark::State& state) {
  const auto buf = RandomBuffer(state.range(0));
  const Iov iovs[] = {Iov(buf)};
  for (auto _ : state) benchmark::DoNotOptimize(ComputeCrc64Full(iovs));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Crc64Full)->Apply(Sizes);

// A KV-cache-like block: the buffer cut into 64 IOVs (e.g. 32 layers x K,V). Bytes processed is
// the block size although only 8 bytes per IOV are read: that is the point of the sampled mode.
void BM_Crc32XorInt64(benchmark::State& state) {
  const auto buf = RandomBuffer(state.range(0));
  std::vector<Iov> iovs;
  const size_t per = buf.size() / 64;
  for (size_t i = 0; i < 64; ++i) iovs.emplace_back(buf.data() + i * per, per);
  for (auto _ : state) benchmark::DoNotOptimize(ComputeCrc32XorInt64(iovs, kDefaultSampleWidth).value());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Crc32XorInt64)->Apply(Sizes);

void BM_Crc64FullSixtyFourIovs(benchmark::State& state) {
  const auto buf = RandomBuffer(state.range(0));
  std::vector<Iov> iovs;
  const size_t per = buf.size() / 64;
  for (size_t i = 0; i < 64; ++i) iovs.emplace_back(buf.data() + i * per, per);
  for (auto _ : state) benchmark::DoNotOptimize(ComputeCrc64Full(iovs));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Crc64FullSixtyFourIovs)->Apply(Sizes);

void BM_Verify4096(benchmark::State& state) {
  Rng rng(4096);
  std::vector<int64_t> expected(4096);
  for (auto& v : expected) v = static_cast<int64_t>(rng.NextU64());
  std::vector<int64_t> actual = expected;
  const std::vector<uint8_t> present(4096, 1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        VerifyBatchChecksums(expected, actual, VerifyStage::kReadOutput, present, present).value().checked);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 4096);
}
BENCHMARK(BM_Verify4096);

// GPU: 64 blocks of the given size each (64 IOVs per block), already in device memory.
void BM_Device(benchmark::State& state, ChecksumAlgo algo) {
  std::string why;
  if (!DeviceChecksumAvailable(&why)) {
    state.SkipWithError(("no GPU: " + why).c_str());
    return;
  }
  const auto buf = RandomBuffer(state.range(0));
  std::vector<Iov> iovs;
  const size_t per = buf.size() / 64;
  for (size_t i = 0; i < 64; ++i) iovs.emplace_back(buf.data() + i * per, per);
  const std::vector<Block> blocks(64, Block(iovs));
  for (auto _ : state) {
    auto r = ComputeHostBlocksOnDevice({algo, kDefaultSampleWidth}, blocks);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0) * 64);
}
BENCHMARK_CAPTURE(BM_Device, crc64_full_with_upload, ChecksumAlgo::kCrc64Full)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Device, crc32_xor_int64_with_upload, ChecksumAlgo::kCrc32XorInt64)->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();
