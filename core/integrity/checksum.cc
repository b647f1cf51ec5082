// CPU implementations of the two block checksums (definitions in checksum.h).
#include "core/integrity/checksum.h"

#include "core/integrity/crc_math.h"

#include <isa-l/crc64.h>
#include <zlib.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace kvchaos::integrity {
namespace {

std::array<std::byte, 8> Le64(uint64_t v) {
  std::array<std::byte, 8> out{};
  for (size_t i = 0; i < 8; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
  return out;
}

}  // namespace

std::string_view ChecksumAlgoName(ChecksumAlgo algo) {
  switch (algo) {
    case ChecksumAlgo::kUnspecified:
      return "unspecified";
    case ChecksumAlgo::kCrc32XorInt64:
      return "crc32_xor_int64";
    case ChecksumAlgo::kCrc64Full:
      return "crc64_full";
  }
  return "unknown";
}

bool ChecksumAlgoFromName(std::string_view name, ChecksumAlgo* algo) {
  for (ChecksumAlgo a : {ChecksumAlgo::kUnspecified, ChecksumAlgo::kCrc32XorInt64, ChecksumAlgo::kCrc64Full}) {
    if (name == ChecksumAlgoName(a)) {
      *algo = a;
      return true;
    }
  }
  return false;
}

Result<size_t> SampleWidthFromEnv() {
  const char* raw = std::getenv(kSampleWidthEnv);
  if (raw == nullptr) return kDefaultSampleWidth;
  const std::string_view text(raw);
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value == 0 ||
      value > (uint64_t{1} << 30)) {
    return Status::InvalidConfig(std::string("environment variable ") + kSampleWidthEnv + "='" + std::string(text) +
                                 "': must be a positive integer number of bytes (default 4)");
  }
  return static_cast<size_t>(value);
}

uint32_t Crc32(std::span<const std::byte> data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = reinterpret_cast<const Bytef*>(data.data());
  size_t left = data.size();
  // zlib takes uInt lengths: feed huge buffers in pieces.
  while (left > 0) {
    const uInt n = static_cast<uInt>(std::min<size_t>(left, std::numeric_limits<uInt>::max()));
    crc = crc32(crc, p, n);
    p += n;
    left -= n;
  }
  return static_cast<uint32_t>(crc);
}

uint64_t FoldCrc32(uint64_t h, uint32_t crc) { return crc_math::Fold(h, crc); }

Result<int64_t> ComputeCrc32XorInt64(Block block, size_t sample_width) {
  if (sample_width == 0) return Status::InvalidArgument("crc32_xor_int64: sample width must be > 0");
  uint64_t h = 0;
  std::vector<std::byte> sample;
  for (size_t i = 0; i < block.size(); ++i) {
    const Iov iov = block[i];
    if (iov.size() < 2) {
      return Status::InvalidArgument("crc32_xor_int64: IOV " + std::to_string(i) + " has " +
                                     std::to_string(iov.size()) + " bytes; at least 2 are needed");
    }
    const size_t s = std::min(sample_width, iov.size() / 2);
    sample.resize(2 * s);
    std::memcpy(sample.data(), iov.data(), s);
    std::memcpy(sample.data() + s, iov.data() + iov.size() - s, s);
    h = FoldCrc32(h, Crc32(sample));
  }
  return static_cast<int64_t>(h);
}

uint64_t Crc64Xz(uint64_t crc, std::span<const std::byte> data) {
  if (data.empty()) return crc;
  return crc64_ecma_refl(crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
}

int64_t ComputeCrc64Full(Block block) {
  uint64_t crc = 0;
  for (const Iov& iov : block) {
    const auto len = Le64(iov.size());
    crc = Crc64Xz(crc, len);
    crc = Crc64Xz(crc, iov);
  }
  const auto count = Le64(block.size());
  crc = Crc64Xz(crc, count);
  return static_cast<int64_t>(crc);
}

Result<std::vector<int64_t>> ChecksumComputer::Compute(std::span<const Block> blocks) const {
  std::vector<int64_t> out;
  out.reserve(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    switch (options_.algo) {
      case ChecksumAlgo::kCrc32XorInt64: {
        Result<int64_t> r = ComputeCrc32XorInt64(blocks[b], options_.sample_width);
        if (!r.ok()) return r.status().WithContext("block " + std::to_string(b));
        out.push_back(*r);
        break;
      }
      case ChecksumAlgo::kCrc64Full:
        out.push_back(ComputeCrc64Full(blocks[b]));
        break;
      case ChecksumAlgo::kUnspecified:
        return Status::InvalidArgument("checksum algorithm is unspecified: set integrity.algo");
    }
  }
  return out;
}

}  // namespace kvchaos::integrity
