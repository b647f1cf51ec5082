// IovLayout: how a block was cut into IOVs when its checksum was computed. Both checksum
// algorithms bind the layout (crc32_xor_int64 samples the head and tail of each IOV, crc64_full
// hashes each IOV's length), so a reader that cuts the same bytes differently computes another
// value. Storing the layout with the checksum lets a scrubber verify a block without being told
// how the writer cut it, and lets a reader tell "you cut it differently" from real damage.
//
// Kept run-length encoded: a 4 MiB block of 64 KiB IOVs is one run. JSON form (field
// `iov_layout` of a CacheLocation): [[count, size], ...], e.g. [[64, 65536]]. Runs are merged on
// construction ([[2,4096],[3,4096]] reads as [[5,4096]]), so equal layouts compare equal.
// A default-constructed layout is "unknown" (records written before layouts were stored).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace kvchaos::meta {

struct IovRun {
  uint64_t count = 0;
  uint64_t size = 0;  // bytes per IOV
  friend bool operator==(const IovRun&, const IovRun&) = default;
};

class IovLayout {
 public:
  // More IOVs than this in one block is a corrupt record, not a layout (upstream cuts a block
  // into layers x (K+V) IOVs, a few hundred); the bound also caps what Sizes() allocates.
  static constexpr uint64_t kMaxIovs = uint64_t{1} << 20;

  IovLayout() = default;  // unknown

  // From IOV sizes in order. InvalidArgument for no IOVs, a zero size, more than kMaxIovs IOVs
  // or a total past 2^64 - 1.
  static Result<IovLayout> FromSizes(std::span<const uint64_t> sizes);
  // From runs, same rules; messages start with `path` ("loc.iov_layout").
  static Result<IovLayout> FromRuns(std::span<const IovRun> runs, std::string_view path);
  // `path` names the field in messages ("cache 'k'.locations[0].iov_layout[1][0]: ...").
  static Result<IovLayout> FromJson(const nlohmann::json& json, std::string_view path);

  bool known() const { return !runs_.empty(); }
  const std::vector<IovRun>& runs() const { return runs_; }
  uint64_t iov_count() const { return iov_count_; }
  uint64_t total_bytes() const { return total_bytes_; }
  // The IOV sizes in order (iov_count() entries).
  std::vector<uint64_t> Sizes() const;
  // True when `sizes` is exactly this layout (without building either side).
  bool Matches(std::span<const uint64_t> sizes) const;

  nlohmann::json ToJson() const;  // [[count, size], ...]; [] when unknown
  // Appends DumpJson(ToJson())'s bytes without building the value.
  void AppendJson(std::string* out) const;
  // "64 x 65536" or "2 x 4096 + 1 x 8192" (bytes); "unknown".
  std::string ToString() const;

  friend bool operator==(const IovLayout&, const IovLayout&) = default;

 private:
  std::vector<IovRun> runs_;
  uint64_t iov_count_ = 0;
  uint64_t total_bytes_ = 0;
};

// The same text as IovLayout::ToString for any size list (zero sizes included), for messages
// about a caller's layout that may not be a valid stored one.
std::string DescribeIovSizes(std::span<const uint64_t> sizes);

}  // namespace kvchaos::meta
