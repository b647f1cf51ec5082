// JSON parsing and validation of DataIntegrityConfig.
#include "core/integrity/integrity_config.h"

#include <string>

namespace kvchaos::integrity {
namespace {

std::string Field(std::string_view path, std::string_view key) { return std::string(path) + "." + std::string(key); }

std::string TypeName(const nlohmann::json& v) { return v.type_name(); }

}  // namespace

Result<DataIntegrityConfig> DataIntegrityConfig::FromJson(const nlohmann::json& json, std::string_view path) {
  if (!json.is_object()) {
    return Status::InvalidConfig(std::string(path) + ": expected an object, got " + TypeName(json));
  }
  DataIntegrityConfig config;
  for (const auto& [key, value] : json.items()) {
    if (key == "enable_meta_checksum" || key == "enable_inline_header") {
      if (!value.is_boolean()) {
        return Status::InvalidConfig(Field(path, key) + ": expected a boolean, got " + TypeName(value));
      }
      (key == "enable_meta_checksum" ? config.enable_meta_checksum : config.enable_inline_header) = value.get<bool>();
    } else if (key == "inline_header_version") {
      if (!value.is_number_integer()) {
        return Status::InvalidConfig(Field(path, key) + ": expected an integer, got " + TypeName(value));
      }
      config.inline_header_version = value.get<int64_t>();
    } else if (key == "algo") {
      if (!value.is_string()) {
        return Status::InvalidConfig(Field(path, key) + ": expected a string, got " + TypeName(value));
      }
      const std::string name = value.get<std::string>();
      if (!ChecksumAlgoFromName(name, &config.algo)) {
        return Status::InvalidConfig(Field(path, key) + ": unknown checksum algorithm '" + name +
                                     "' (known: crc32_xor_int64, crc64_full)");
      }
    } else {
      return Status::InvalidConfig(Field(path, key) +
                                   ": unknown field (known: enable_meta_checksum, enable_inline_header, "
                                   "inline_header_version, algo)");
    }
  }
  return config;
}

nlohmann::json DataIntegrityConfig::ToJson() const {
  return nlohmann::json{{"enable_meta_checksum", enable_meta_checksum},
                        {"enable_inline_header", enable_inline_header},
                        {"inline_header_version", inline_header_version},
                        {"algo", std::string(ChecksumAlgoName(algo))}};
}

Status DataIntegrityConfig::Validate(std::string_view path) const {
  if (enable_inline_header && inline_header_version == 0) {
    return Status(StatusCode::kInlineHeaderInvalid,
                  Field(path, "enable_inline_header") +
                      ": is true but inline_header_version is 0 (a switch without a version); set the version to " +
                      std::to_string(kLatestInlineHeaderVersion) + " or the switch to false");
  }
  if (enable_inline_header && (inline_header_version < 0 || inline_header_version > kLatestInlineHeaderVersion)) {
    return Status(StatusCode::kInlineHeaderInvalid,
                  Field(path, "inline_header_version") + ": " + std::to_string(inline_header_version) +
                      " is not a header version this build writes (known: 1 to " +
                      std::to_string(kLatestInlineHeaderVersion) + ")");
  }
  if (!enable_inline_header && inline_header_version != 0) {
    return Status::InvalidConfig(Field(path, "inline_header_version") + ": is " +
                                 std::to_string(inline_header_version) +
                                 " but enable_inline_header is false (an orphan version); set it to 0");
  }
  if (enable_meta_checksum && algo == ChecksumAlgo::kUnspecified) {
    return Status::InvalidConfig(Field(path, "algo") +
                                 ": enable_meta_checksum is true but no algorithm is set (use crc32_xor_int64 or "
                                 "crc64_full)");
  }
  return Status::Ok();
}

}  // namespace kvchaos::integrity
