// Reading and validating CacheClientConfig (shape in cache_client_config.h).
#include "core/client/cache_client_config.h"

#include "core/client/leader_discovery.h"
#include "core/common/config_reader.h"

namespace kvchaos::client {
namespace {

Result<CacheClientConfig> ReadFromFile(ConfigFile& file) {
  CacheClientConfig out;
  ConfigSection root = file.Root();
  store::ReadStoreConfig(root, &out.store);
  if (std::optional<ConfigSection> meta = root.Section("meta", /*required=*/true)) {
    meta->Required("storage", &out.storage);
    meta->Optional("indexer", &out.indexer);
    meta->Optional("nodes", &out.nodes);
    for (const std::string& endpoint : out.nodes) {
      std::string host;
      int port = 0;
      if (Status s = ParseHostPort(endpoint, &host, &port); !s.ok()) meta->Problem("nodes", s.message());
    }
    if (out.indexer.empty() == out.nodes.empty()) {
      meta->Problem(out.indexer.empty() ? "indexer" : "nodes",
                    "give either meta.indexer (an in-process meta service) or meta.nodes (a cluster); " +
                        std::string(out.indexer.empty() ? "neither is given" : "both are given"));
    }
    if (meta->OptionalMillis("request_timeout_ms", &out.request_timeout_ms) && out.request_timeout_ms <= 0) {
      meta->Problem("request_timeout_ms", "must be > 0");
    }
    if (meta->Optional("max_attempts", &out.max_attempts) && (out.max_attempts < 1 || out.max_attempts > 1000)) {
      meta->Problem("max_attempts", "must be in 1..1000");
    }
    if (out.nodes.empty() && !out.indexer.empty()) {
      for (const char* key : {"request_timeout_ms", "max_attempts"}) {
        if (meta->Has(key)) meta->Problem(key, "applies to meta.nodes only (an in-process meta makes no calls)");
      }
    }
    if (std::optional<ConfigSection> reg = meta->Section("register")) {
      std::string checksum;
      if (reg->Required("checksum", &checksum)) {
        Result<meta::StorageConfig> storage = meta::StorageConfig::Posix(out.storage, checksum);
        if (storage.ok()) {
          out.register_storage = *storage;
        } else {
          reg->Problem("checksum", storage.status().message());
        }
      }
      reg->Done();
    }
    meta->OptionalByteSize("iov_size", &out.iov_size);
    meta->Done();
  }
  root.Done({"store_pipeline", "use_layerwise"});
  KVCHAOS_RETURN_IF_ERROR(file.Finish());
  KVCHAOS_RETURN_IF_ERROR(out.Validate().WithContext(file.name()));
  return out;
}

}  // namespace

Status CacheClientConfig::Validate() const {
  if (storage.empty()) return Status::InvalidConfig("meta.storage: empty");
  if (indexer.empty() == nodes.empty()) {
    return Status::InvalidConfig("meta: give either indexer (an in-process meta service) or nodes (a cluster)");
  }
  for (const std::string& endpoint : nodes) {
    std::string host;
    int port = 0;
    if (Status s = ParseHostPort(endpoint, &host, &port); !s.ok()) return Status::InvalidConfig("meta.nodes: " + s.message());
  }
  if (register_storage && register_storage->global_unique_name != storage) {
    return Status::InvalidConfig("meta.register: registers '" + register_storage->global_unique_name +
                                 "', not meta.storage '" + storage + "'");
  }
  store::PosixStoreConfig copy = store;
  KVCHAOS_RETURN_IF_ERROR(copy.NormalizeAndValidate());
  if (iov_size != 0 && store.block_size % iov_size != 0) {
    return Status::InvalidConfig("meta.iov_size: " + std::to_string(iov_size) + " does not divide block_size " +
                                 std::to_string(store.block_size));
  }
  return Status::Ok();
}

Result<CacheClientConfig> LoadCacheClientConfig(const std::string& path) {
  Result<ConfigFile> file = ConfigFile::Load(path);
  if (!file.ok()) return file.status();
  return ReadFromFile(*file);
}

Result<CacheClientConfig> ParseCacheClientConfig(std::string_view text, const std::string& name) {
  Result<ConfigFile> file = ConfigFile::Parse(text, name);
  if (!file.ok()) return file.status();
  return ReadFromFile(*file);
}

}  // namespace kvchaos::client
