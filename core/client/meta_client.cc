// InProcessMetaClient: MetaClient over a CacheManager in the same process.
#include "core/client/meta_client.h"

namespace kvchaos::client {

Result<meta::StorageConfig> InProcessMetaClient::GetStorageConfig(const std::string& storage) {
  std::optional<meta::StorageConfig> config = registry_.Get(storage);
  if (!config) return Status::NotFound("storage '" + storage + "' is not registered with the meta service");
  return *config;
}

Result<meta::WriteSession> InProcessMetaClient::StartWrite(std::span<const std::string> keys,
                                                           const std::string& storage) {
  return manager_.StartWriteCache(keys, storage);
}

Status InProcessMetaClient::FinishWrite(const std::string& session_id, std::span<const std::string> keys,
                                        std::span<const int64_t> checksums, std::span<const uint8_t> present,
                                        std::span<const meta::IovLayout> iov_layouts, int64_t inline_header_version) {
  return manager_.FinishWriteCache(session_id, keys, checksums, present, iov_layouts, inline_header_version);
}

Result<std::vector<std::optional<meta::CacheLocation>>> InProcessMetaClient::GetLocations(
    std::span<const std::string> keys) {
  return manager_.GetCacheLocation(keys);
}

Status InProcessMetaClient::Remove(std::span<const std::string> keys) { return manager_.RemoveCache(keys); }

}  // namespace kvchaos::client
