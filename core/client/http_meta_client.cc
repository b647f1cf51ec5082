// HttpMetaClient calls mapped onto the node's HTTP/JSON API (see http_meta_client.h).
#include "core/client/http_meta_client.h"

#include <cstdio>

#include <spdlog/spdlog.h>

#include "core/service/wire_format.h"

namespace kvchaos::client {
namespace {
nlohmann::json Keys(std::span<const std::string> keys) {
  nlohmann::json array = nlohmann::json::array();
  for (const std::string& key : keys) array.push_back(key);
  return array;
}
}  // namespace

Result<meta::StorageConfig> HttpMetaClient::GetStorageConfig(const std::string& storage) {
  auto answer = discovery_.CallLeader("GetStorageConfig", {{"storage", storage}});
  if (!answer.ok()) return answer.status();
  if (!answer->contains("storage")) return Status::Internal("GetStorageConfig answer has no \"storage\"");
  return meta::StorageConfig::FromJson((*answer)["storage"]);
}

std::string HttpMetaClient::RequestIdPrefix(uint64_t seed) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(Rng(seed).Split("meta_client.request_id").NextU64()));
  return text;
}

Result<meta::WriteSession> HttpMetaClient::StartWrite(std::span<const std::string> keys, const std::string& storage) {
  // One id for every attempt of this call (CallLeader retries the same body): a copy of an attempt
  // that reaches the leader after the retry did gets the same session back, instead of taking over
  // the locations the retry's session is writing.
  nlohmann::json body = {{"keys", Keys(keys)}, {"request_id", request_id_prefix_ + "-" + std::to_string(next_request_++)}};
  if (!storage.empty()) body["storage"] = storage;
  auto answer = discovery_.CallLeader("StartWriteCache", body);
  // A node from before request ids refuses the field (strict parsing, before it changes anything).
  if (!answer.ok() && answer.status().code() == StatusCode::kInvalidArgument &&
      answer.status().message().starts_with("request_id: unknown field")) {
    spdlog::warn("StartWriteCache: the leader does not know request_id (an older node); starting {} keys without it",
                 keys.size());
    body.erase("request_id");
    answer = discovery_.CallLeader("StartWriteCache", body);
  }
  if (!answer.ok()) return answer.status();
  if (!answer->contains("session")) return Status::Internal("StartWriteCache answer has no \"session\"");
  return service::wire::WriteSessionFromJson((*answer)["session"]);
}

Status HttpMetaClient::FinishWrite(const std::string& session_id, std::span<const std::string> keys,
                                   std::span<const int64_t> checksums, std::span<const uint8_t> present,
                                   std::span<const meta::IovLayout> iov_layouts, int64_t inline_header_version) {
  nlohmann::json body = {{"session_id", session_id}, {"keys", Keys(keys)}};
  if (!checksums.empty()) body["checksums"] = std::vector<int64_t>(checksums.begin(), checksums.end());
  if (!present.empty()) {
    std::vector<bool> flags;
    for (uint8_t p : present) flags.push_back(p != 0);
    body["checksum_present"] = flags;
  }
  // Only when there are layouts, so the request stays what an older node accepts otherwise.
  if (!iov_layouts.empty()) body["iov_layouts"] = service::wire::IovLayoutsToJson(iov_layouts);
  if (inline_header_version != 0) body["inline_header_version"] = inline_header_version;
  Status s = discovery_.CallLeader("FinishWriteCache", body).status();
  // Likewise a node from before inline headers: the records then say "no header", which reads
  // the data right (the header sits after it) and only loses the misroute check for them.
  if (s.code() == StatusCode::kInvalidArgument && body.contains("inline_header_version") &&
      s.message().starts_with("inline_header_version: unknown field")) {
    spdlog::warn("FinishWriteCache: the leader does not know inline_header_version (an older node); committing {} "
                 "keys as blocks without inline headers",
                 keys.size());
    body.erase("inline_header_version");
    s = discovery_.CallLeader("FinishWriteCache", body).status();
  }
  // A node from before layouts were stored refuses the field (strict parsing, before it changes
  // anything). Commit without them rather than fail every Save while clients are upgraded ahead
  // of the nodes: those records read as "layout unknown", as if an older client had written them.
  if (s.code() == StatusCode::kInvalidArgument && body.contains("iov_layouts") &&
      s.message().starts_with("iov_layouts: unknown field")) {
    spdlog::warn("FinishWriteCache: the leader does not know iov_layouts (an older node); committing {} keys "
                 "without their IOV layouts",
                 keys.size());
    body.erase("iov_layouts");
    s = discovery_.CallLeader("FinishWriteCache", body).status();
  }
  return s;
}

Result<std::vector<std::optional<meta::CacheLocation>>> HttpMetaClient::GetLocations(std::span<const std::string> keys) {
  auto read = ReadLocations(keys);
  if (!read.ok()) return read.status();
  return std::move(read->locations);
}

Result<LocationsRead> HttpMetaClient::ReadLocations(std::span<const std::string> keys) {
  auto answer = discovery_.CallLeader("GetCacheLocation", {{"keys", Keys(keys)}});
  if (!answer.ok()) return answer.status();
  auto served = service::wire::ServedReadFromJson(*answer);
  if (!served.ok()) return served.status();
  // Found in place: value() would copy the whole array out of the answer.
  const auto found = answer->find("locations");
  if (found == answer->end() || !found->is_array() || found->size() != keys.size()) {
    return Status::Internal("GetCacheLocation answer has no \"locations\" array of one entry per key");
  }
  const nlohmann::json& arr = *found;
  std::vector<std::optional<meta::CacheLocation>> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    if (arr[i].is_null()) {
      out.emplace_back();
      continue;
    }
    auto l = meta::CacheLocation::FromJson(arr[i], "location of '" + keys[i] + "'");
    if (!l.ok()) return l.status();
    out.emplace_back(std::move(*l));
  }
  return LocationsRead{std::move(out), std::move(served->served_by), served->fencing_token};
}

Status HttpMetaClient::Remove(std::span<const std::string> keys) {
  return discovery_.CallLeader("RemoveCache", {{"keys", Keys(keys)}}).status();
}

Status HttpMetaClient::AddStorage(const meta::StorageConfig& config) {
  return discovery_.CallLeader("AddStorage", {{"storage", config.ToJson()}}).status();
}

Result<std::vector<meta::StorageConfig>> HttpMetaClient::ListStorages() {
  auto answer = discovery_.CallLeader("ListStorages", nlohmann::json::object());
  if (!answer.ok()) return answer.status();
  const auto found = answer->find("storages");
  if (found == answer->end() || !found->is_array()) return Status::Internal("ListStorages answer has no \"storages\" array");
  const nlohmann::json& list = *found;
  std::vector<meta::StorageConfig> out;
  for (const nlohmann::json& item : list) {
    Result<meta::StorageConfig> config = meta::StorageConfig::FromJson(item);
    if (!config.ok()) return config.status().WithContext("ListStorages answer");
    out.push_back(std::move(*config));
  }
  return out;
}

}  // namespace kvchaos::client
