// Block checksums of the data-integrity path (plan A of read-write-data-integrity.md): the client
// computes one int64 per block at write, the meta service keeps it, the reader recomputes and
// compares. A block is a list of IOVs (layer_num x (K+V) buffers of one KV-cache block).
//
// Two algorithms:
//  * crc32_xor_int64 — bit-exact with upstream's SdkBufferCheckUtil (REFERENCE.md): per IOV a
//    zlib CRC-32 of the first and last s = min(W, size/2) bytes, folded into a 64-bit state. Cheap,
//    but blind to bytes outside the sampled head/tail and to the IOV length.
//  * crc64_full — ours: covers every byte and binds each IOV's length and the IOV count, so any
//    bit flip anywhere and any truncation or extension of an IOV changes the checksum. Defined as
//        CRC-64/XZ( le64(len_0) || iov_0 || le64(len_1) || iov_1 || ... || le64(iov_count) )
//    where CRC-64/XZ is isa-l's crc64_ecma_refl with init 0 (ECMA-182 polynomial
//    0x42F0E1EBA9EA3693 reflected, init and final xor all-ones; check("123456789") =
//    0x995DC9BBDF1939FA), the result reinterpreted as int64. ECMA reflected was picked because it
//    is the best-known 64-bit CRC (xz, Go's crc64.ECMA), so outside tools can recompute it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace kvchaos::integrity {

// Stable numbers: they are stored with every checksum in the meta index.
enum class ChecksumAlgo : int32_t {
  kUnspecified = 0,
  kCrc32XorInt64 = 1,
  kCrc64Full = 2,
};

// "crc32_xor_int64", "crc64_full", "unspecified".
std::string_view ChecksumAlgoName(ChecksumAlgo algo);
// Accepts the names above; false for anything else.
bool ChecksumAlgoFromName(std::string_view name, ChecksumAlgo* algo);

using Iov = std::span<const std::byte>;
// One block: its IOVs in order.
using Block = std::span<const Iov>;

// Default sample width of crc32_xor_int64 and the environment variable that overrides it.
inline constexpr size_t kDefaultSampleWidth = 4;
inline constexpr const char* kSampleWidthEnv = "KVCM_CHECK_IOV_BYTE_SIZE";

// Sample width from KVCM_CHECK_IOV_BYTE_SIZE (default 4 when unset). A value that is not a positive
// integer is an InvalidConfig naming the variable: a typo must not silently weaken the checksum.
Result<size_t> SampleWidthFromEnv();

// zlib CRC-32 (IEEE, reflected 0xEDB88320, init and final xor all-ones).
uint32_t Crc32(std::span<const std::byte> data);
// One step of upstream's 64-bit fold: h ^= c + 0x9e3779b97f4a7c15 + (h << 12) + asr(h, 32).
uint64_t FoldCrc32(uint64_t h, uint32_t crc);

// crc32_xor_int64 of one block. InvalidArgument when an IOV has fewer than 2 bytes or W == 0.
Result<int64_t> ComputeCrc32XorInt64(Block block, size_t sample_width);
// crc64_full of one block (any IOV sizes, including 0).
int64_t ComputeCrc64Full(Block block);

// Raw CRC-64/XZ continuation: crc of (bytes before) || data given the crc of the bytes before.
uint64_t Crc64Xz(uint64_t crc, std::span<const std::byte> data);

// Computes checksums of blocks with one algorithm, on the CPU or on a CUDA device.
class ChecksumComputer {
 public:
  struct Options {
    ChecksumAlgo algo = ChecksumAlgo::kCrc32XorInt64;
    size_t sample_width = kDefaultSampleWidth;  // crc32_xor_int64 only
  };
  explicit ChecksumComputer(Options options) : options_(options) {}

  const Options& options() const { return options_; }

  // One checksum per block, in order. Fails as a whole (and writes nothing) when any block is
  // invalid, naming the block and IOV.
  Result<std::vector<int64_t>> Compute(std::span<const Block> blocks) const;

 private:
  Options options_;
};

}  // namespace kvchaos::integrity
