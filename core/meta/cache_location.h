// CacheLocation: where one cached block lives (a storage and a location inside it), whether it is
// still being written, and the checksum the writer computed for it (read-write-data-integrity.md).
//
// The checksum has an explicit presence flag: 0 is a legal checksum. Records written before
// checksums existed, or by upstream (which used 0 as "absent"), still parse: no `checksum` field,
// or `checksum: 0` without `checksum_present`, reads as "no checksum", so old data is never
// reported as a mismatch.
//
// `iov_layout` is how the writer cut the block into IOVs when it computed the checksum (both
// algorithms bind the layout; see iov_layout.h), stored as `"iov_layout": [[count, size], ...]`.
// Records without the field (older writers) read as "layout unknown"; older readers ignore it.
// A layout that is not one (empty, a zero count or size, overflowing counts) fails the parse
// naming the field. Whether it adds up to the block length is checked by the reader, which knows
// the length (TransferClient).
//
// `inline_header_version` is the version of the inline header its writer wrote after the block's
// data (docs/inline-header.md), 0 for none: how a reader knows, per block, whether to read and
// check one, so a storage being upgraded holds both kinds. Written only when not 0, so records
// without headers stay as they were; older readers ignore it (the header sits after the data).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/integrity/checksum.h"
#include "core/meta/iov_layout.h"

namespace kvchaos::meta {

enum class LocationStatus : int32_t {
  kWriting = 0,  // allocated by StartWriteCache, not readable yet
  kServing = 1,  // committed by FinishWriteCache
};

std::string_view LocationStatusName(LocationStatus status);

struct CacheLocation {
  std::string storage;  // global_unique_name of the storage holding the block
  std::string uri;      // the block's place inside that storage (posix store: 32 hex block id)
  LocationStatus status = LocationStatus::kWriting;
  std::string write_session;  // id of the write session while kWriting; empty once serving
  int64_t checksum = 0;
  bool checksum_present = false;
  integrity::ChecksumAlgo checksum_algo = integrity::ChecksumAlgo::kUnspecified;
  IovLayout iov_layout;  // unknown (default) for records written before layouts were stored
  int64_t inline_header_version = 0;  // 0: the block has no inline header

  nlohmann::json ToJson() const;
  // Appends DumpJson(ToJson())'s bytes (keys in the same sorted order) without building the
  // value: the index entry of every write is such text.
  void AppendJson(std::string* out) const;
  // `path` names the record in messages ("cache 'k1'.locations[0]").
  static Result<CacheLocation> FromJson(const nlohmann::json& json, std::string_view path);

  friend bool operator==(const CacheLocation&, const CacheLocation&) = default;
};

// A cache entry's `locations` field: DumpJson of the array of the locations' ToJson.
std::string LocationsJson(std::span<const CacheLocation> locations);

}  // namespace kvchaos::meta
