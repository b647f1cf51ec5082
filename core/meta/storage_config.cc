// JSON parsing and validation of StorageConfig.
#include "core/meta/storage_config.h"

#include "core/meta/meta_indexer.h"

namespace kvchaos::meta {
namespace {

std::string Where(const StorageConfig& c) {
  return c.global_unique_name.empty() ? std::string("storage") : "storage '" + c.global_unique_name + "'";
}

}  // namespace

Result<StorageConfig> StorageConfig::Posix(std::string name, std::string_view checksum) {
  StorageConfig c;
  c.type = "posix";
  c.global_unique_name = std::move(name);
  if (checksum != "off") {
    integrity::ChecksumAlgo algo = integrity::ChecksumAlgo::kUnspecified;
    if (!integrity::ChecksumAlgoFromName(checksum, &algo) || algo == integrity::ChecksumAlgo::kUnspecified) {
      return Status::InvalidArgument("checksum '" + std::string(checksum) +
                                     "': expected crc64_full, crc32_xor_int64 or off");
    }
    c.integrity.enable_meta_checksum = true;
    c.integrity.algo = algo;
  }
  return c;
}

Result<StorageConfig> StorageConfig::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidConfig(std::string("storage: expected an object, got ") + j.type_name());
  StorageConfig c;
  // The name first, so every later message can say which storage it is about.
  if (auto it = j.find("global_unique_name"); it != j.end()) {
    if (!it->is_string()) {
      return Status::InvalidConfig(std::string("storage.global_unique_name: expected a string, got ") + it->type_name());
    }
    c.global_unique_name = it->get<std::string>();
  }
  const std::string where = Where(c);
  for (const auto& [key, value] : j.items()) {
    if (key == "global_unique_name") continue;
    if (key == "type") {
      if (!value.is_string()) {
        return Status::InvalidConfig(where + ".type: expected a string, got " + value.type_name());
      }
      c.type = value.get<std::string>();
    } else if (key == "storage_spec") {
      if (!value.is_object()) {
        return Status::InvalidConfig(where + ".storage_spec: expected an object, got " + value.type_name());
      }
      c.storage_spec = value;
    } else if (key == "integrity") {
      Result<integrity::DataIntegrityConfig> integrity =
          integrity::DataIntegrityConfig::FromJson(value, where + ".integrity");
      if (!integrity.ok()) return integrity.status();
      c.integrity = *integrity;
    } else {
      return Status::InvalidConfig(where + "." + key +
                                   ": unknown field (known: type, global_unique_name, storage_spec, integrity)");
    }
  }
  return c;
}

Result<StorageConfig> StorageConfig::FromJsonString(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidConfig("storage: not valid JSON");
  return FromJson(j);
}

nlohmann::json StorageConfig::ToJson() const {
  return nlohmann::json{{"type", type},
                        {"global_unique_name", global_unique_name},
                        {"storage_spec", storage_spec},
                        {"integrity", integrity.ToJson()}};
}

Status StorageConfig::Validate() const {
  if (global_unique_name.empty()) return Status::InvalidConfig("storage.global_unique_name: missing or empty");
  if (!IsValidUtf8(global_unique_name) || !IsValidUtf8(type)) {
    return Status::InvalidConfig("storage.global_unique_name / type: not valid UTF-8");
  }
  if (type.empty()) return Status::InvalidConfig(Where(*this) + ".type: missing or empty");
  return integrity.Validate(Where(*this) + ".integrity");
}

}  // namespace kvchaos::meta
