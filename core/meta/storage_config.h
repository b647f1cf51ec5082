// StorageConfig: one storage registered with the meta service (read-write-data-integrity.md):
//
//   {"type": "posix", "global_unique_name": "nfs1",
//    "storage_spec": {...backend-specific...},
//    "integrity": {"enable_meta_checksum": true, "algo": "crc64_full"}}
//
// `integrity` is optional (absent = all off). Any problem inside it fails the whole parse: a
// storage is never registered with integrity silently downgraded to "off".
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/integrity/integrity_config.h"

namespace kvchaos::meta {

struct StorageConfig {
  std::string type;
  std::string global_unique_name;
  nlohmann::json storage_spec = nlohmann::json::object();
  integrity::DataIntegrityConfig integrity;

  // A posix storage named `name` whose blocks carry meta checksums of `checksum` ("crc64_full",
  // "crc32_xor_int64"), or none ("off"): how the CLI and client configs say it. InvalidArgument
  // naming the known values otherwise.
  static Result<StorageConfig> Posix(std::string name, std::string_view checksum);

  // Parses the JSON shape above; InvalidConfig names the field ("storage 'nfs1'.integrity.algo").
  static Result<StorageConfig> FromJson(const nlohmann::json& json);
  static Result<StorageConfig> FromJsonString(std::string_view text);
  nlohmann::json ToJson() const;

  // Required fields and the integrity rules (DataIntegrityConfig::Validate).
  Status Validate() const;

  friend bool operator==(const StorageConfig&, const StorageConfig&) = default;
};

}  // namespace kvchaos::meta
