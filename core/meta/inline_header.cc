// Encoding and checks of the inline block header (layout in docs/inline-header.md).
#include "core/meta/inline_header.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace kvchaos::meta {
namespace {

constexpr size_t kVersionAt = 8, kSizeAt = 12, kDataLengthAt = 16, kKeyHashAt = 24, kKeyLengthAt = 32,
                 kAlgoAt = 36, kFlagsAt = 37, kRunsAt = 38, kChecksumAt = 40, kHeaderChecksumAt = 56,
                 kLayoutAt = 64, kKeyAt = kLayoutAt + 16 * InlineHeader::kMaxLayoutRuns;
constexpr uint8_t kFlagChecksum = 1, kFlagKeyStored = 2;

template <typename T>
void Put(std::span<std::byte> out, size_t at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out[at + i] = static_cast<std::byte>(static_cast<uint64_t>(v) >> (8 * i));
}

template <typename T>
T Get(std::span<const std::byte> in, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(in[at + i]) << (8 * i);
  return static_cast<T>(v);
}

// CRC-64/XZ of the region with the header checksum field taken as zero.
uint64_t HeaderChecksum(std::span<const std::byte> bytes) {
  static constexpr std::array<std::byte, 8> kZero{};
  uint64_t crc = integrity::Crc64Xz(0, bytes.first(kHeaderChecksumAt));
  crc = integrity::Crc64Xz(crc, kZero);
  return integrity::Crc64Xz(crc, bytes.subspan(kHeaderChecksumAt + 8));
}

Status Corrupt(std::string_view what) { return Status(StatusCode::kCorruption, "inline header: " + std::string(what)); }

}  // namespace

uint64_t InlineHeader::HashKey(std::string_view key) {
  return integrity::Crc64Xz(0, std::as_bytes(std::span(key.data(), key.size())));
}

InlineHeader InlineHeader::For(std::string_view key, uint64_t data_length, std::optional<int64_t> checksum,
                               integrity::ChecksumAlgo algo, const IovLayout& layout) {
  InlineHeader h;
  h.data_length = data_length;
  h.key_length = static_cast<uint32_t>(key.size());
  h.key_hash = HashKey(key);
  if (key.size() <= kMaxStoredKeyBytes) h.key = std::string(key);
  if (checksum) {
    h.checksum_present = true;
    h.checksum = *checksum;
    h.checksum_algo = algo;
  }
  if (layout.runs().size() <= kMaxLayoutRuns) h.layout = layout;
  return h;
}

void InlineHeader::Encode(std::span<std::byte> out) const {
  std::fill(out.begin(), out.end(), std::byte{0});
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  Put<uint32_t>(out, kVersionAt, version);
  Put<uint32_t>(out, kSizeAt, static_cast<uint32_t>(kBytes));
  Put<uint64_t>(out, kDataLengthAt, data_length);
  Put<uint64_t>(out, kKeyHashAt, key_hash);
  Put<uint32_t>(out, kKeyLengthAt, key_length);
  Put<uint8_t>(out, kAlgoAt, checksum_present ? static_cast<uint8_t>(checksum_algo) : 0);
  Put<uint8_t>(out, kFlagsAt, (checksum_present ? kFlagChecksum : 0) | (key ? kFlagKeyStored : 0));
  const std::vector<IovRun>& runs = layout.runs();
  Put<uint16_t>(out, kRunsAt, static_cast<uint16_t>(runs.size()));
  Put<uint64_t>(out, kChecksumAt, static_cast<uint64_t>(checksum_present ? checksum : 0));
  for (size_t r = 0; r < runs.size(); ++r) {
    Put<uint64_t>(out, kLayoutAt + 16 * r, runs[r].count);
    Put<uint64_t>(out, kLayoutAt + 16 * r + 8, runs[r].size);
  }
  if (key) std::memcpy(out.data() + kKeyAt, key->data(), key->size());
  Put<uint64_t>(out, kHeaderChecksumAt, HeaderChecksum(out));
}

Result<InlineHeader> InlineHeader::Decode(std::span<const std::byte> in) {
  if (in.size() != kBytes) return Corrupt(std::to_string(in.size()) + " bytes, want " + std::to_string(kBytes));
  if (std::memcmp(in.data(), kMagic.data(), kMagic.size()) != 0) return Corrupt("wrong magic (not a block header)");
  InlineHeader h;
  h.version = Get<uint32_t>(in, kVersionAt);
  if (h.version != kVersion) return Corrupt("unknown version " + std::to_string(h.version));
  if (Get<uint32_t>(in, kSizeAt) != kBytes) return Corrupt("size " + std::to_string(Get<uint32_t>(in, kSizeAt)));
  const uint64_t stored = Get<uint64_t>(in, kHeaderChecksumAt);
  if (stored != HeaderChecksum(in)) return Corrupt("its own checksum differs (the header is damaged)");
  h.data_length = Get<uint64_t>(in, kDataLengthAt);
  h.key_hash = Get<uint64_t>(in, kKeyHashAt);
  h.key_length = Get<uint32_t>(in, kKeyLengthAt);
  const uint8_t flags = Get<uint8_t>(in, kFlagsAt);
  h.checksum_present = (flags & kFlagChecksum) != 0;
  if (h.checksum_present) {
    h.checksum_algo = static_cast<integrity::ChecksumAlgo>(Get<uint8_t>(in, kAlgoAt));
    h.checksum = static_cast<int64_t>(Get<uint64_t>(in, kChecksumAt));
  }
  if ((flags & kFlagKeyStored) != 0) {
    if (h.key_length > kMaxStoredKeyBytes) return Corrupt("key of " + std::to_string(h.key_length) + " bytes stored");
    h.key = std::string(reinterpret_cast<const char*>(in.data() + kKeyAt), h.key_length);
  }
  const uint16_t runs = Get<uint16_t>(in, kRunsAt);
  if (runs > kMaxLayoutRuns) return Corrupt(std::to_string(runs) + " layout runs");
  if (runs > 0) {
    std::vector<IovRun> list;
    for (size_t r = 0; r < runs; ++r) {
      list.push_back({Get<uint64_t>(in, kLayoutAt + 16 * r), Get<uint64_t>(in, kLayoutAt + 16 * r + 8)});
    }
    Result<IovLayout> layout = IovLayout::FromRuns(list, "inline header layout");
    if (!layout.ok()) return Corrupt(layout.status().message());
    h.layout = std::move(*layout);
  }
  return h;
}

bool InlineHeader::IsFor(std::string_view k) const {
  if (key) return *key == k;
  return key_length == k.size() && key_hash == HashKey(k);
}

std::string InlineHeader::DescribeKey() const {
  if (key) return "'" + *key + "'";
  return "a key of " + std::to_string(key_length) + " bytes with hash " + std::to_string(key_hash);
}

}  // namespace kvchaos::meta
