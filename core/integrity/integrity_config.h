// DataIntegrityConfig: the `integrity` object of a storage config (read-write-data-integrity.md):
//
//   "integrity": {"enable_meta_checksum": true, "enable_inline_header": false,
//                 "inline_header_version": 0, "algo": "crc64_full"}
//
// A storage config without `integrity` means everything off. A present but ill-typed or unknown
// field fails the parse (no silent fallback to "off"). Validate() holds the seed's rules; the
// storage registry runs it on add and on recovery, the TransferClient at construction.
// `inline_header_version` is what writers write; readers go by each block's record.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>

#include "core/common/status.h"
#include "core/integrity/checksum.h"

namespace kvchaos::integrity {

struct DataIntegrityConfig {
  bool enable_meta_checksum = false;  // plan A: checksums kept in meta and verified on read
  // Plan B (docs/inline-header.md): every block carries a header naming its key, written with
  // its data and checked on read. On needs a version (1 to kLatestInlineHeaderVersion).
  bool enable_inline_header = false;
  int64_t inline_header_version = 0;
  static constexpr int64_t kLatestInlineHeaderVersion = 1;
  ChecksumAlgo algo = ChecksumAlgo::kCrc32XorInt64;

  // Parses the JSON object; `path` names it in messages ("storage 'nfs'.integrity").
  // Wrong types, unknown fields and unknown algorithm names are InvalidConfig naming the field.
  static Result<DataIntegrityConfig> FromJson(const nlohmann::json& json, std::string_view path = "integrity");
  nlohmann::json ToJson() const;

  // The seed's rules: inline header on without a version, or with one this build does not know ->
  // InlineHeaderInvalid; inline_header_version != 0 without the header -> InvalidConfig (orphan
  // version); meta checksum on with algo unspecified -> InvalidConfig. Messages name the field
  // under `path`.
  Status Validate(std::string_view path = "integrity") const;

  friend bool operator==(const DataIntegrityConfig&, const DataIntegrityConfig&) = default;
};

}  // namespace kvchaos::integrity
