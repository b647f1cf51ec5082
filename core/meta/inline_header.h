// InlineHeader: the self-describing header every block of a storage with plan B on carries after
// its data (docs/inline-header.md has the byte layout and why it sits there). It names the block's
// key (in full where it fits, always as length and CRC-64/XZ hash), its data length, its checksum
// with the algorithm and the IOV layout that checksum was computed over, and it has a checksum of
// its own, so a reader can tell a damaged header, another block's header (a misrouted read) and a
// block cut short apart before it returns any data.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/integrity/checksum.h"
#include "core/meta/iov_layout.h"

namespace kvchaos::meta {

struct InlineHeader {
  // The region's size on the storage: one direct-I/O alignment unit, so data and header stay
  // aligned (store::AlignedBuffer::kAlignment).
  static constexpr size_t kBytes = 4096;
  static constexpr std::array<char, 8> kMagic = {'K', 'V', 'C', 'H', 'H', 'D', 'R', '1'};
  static constexpr uint32_t kVersion = 1;
  static constexpr size_t kMaxLayoutRuns = 64;
  static constexpr size_t kMaxStoredKeyBytes = kBytes - 64 - 16 * kMaxLayoutRuns;  // 3008

  uint32_t version = kVersion;
  uint64_t data_length = 0;
  uint32_t key_length = 0;
  uint64_t key_hash = 0;
  std::optional<std::string> key;  // the key's bytes, when they fit in the header
  bool checksum_present = false;
  integrity::ChecksumAlgo checksum_algo = integrity::ChecksumAlgo::kUnspecified;
  int64_t checksum = 0;
  IovLayout layout;  // unknown when the writer had none or it has more than kMaxLayoutRuns runs

  // The header of `key`'s block; the checksum and layout when the writer has them.
  static InlineHeader For(std::string_view key, uint64_t data_length, std::optional<int64_t> checksum,
                          integrity::ChecksumAlgo algo, const IovLayout& layout);
  static uint64_t HashKey(std::string_view key);

  // Writes the kBytes bytes of the header into `out` (exactly kBytes long).
  void Encode(std::span<std::byte> out) const;
  // Reads a header back. Corruption (naming what is wrong) for a wrong magic, an unknown version
  // or size, a header checksum that differs, or fields that cannot be (a key longer than stored).
  static Result<InlineHeader> Decode(std::span<const std::byte> bytes);

  // Whether this header is `key`'s: the stored bytes when there are any, else length and hash.
  bool IsFor(std::string_view key) const;
  // The key this header names, for messages: the stored key, or "a key of L bytes, hash H".
  std::string DescribeKey() const;
};

}  // namespace kvchaos::meta
