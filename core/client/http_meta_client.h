// HttpMetaClient: the MetaClient of a TransferClient in another process than the meta service.
// Every call goes to the leading node found by LeaderDiscovery (rediscovering and retrying on
// NotLeader or an unreachable node); answers are decoded with the node's wire format.
#pragma once

#include <atomic>
#include <string>

#include "core/client/leader_discovery.h"
#include "core/client/meta_client.h"

namespace kvchaos::client {

class HttpMetaClient final : public MetaClient {
 public:
  HttpMetaClient(Runtime& runtime, LeaderDiscoveryOptions options, NodeTransport& transport = NodeTransport::Http())
      : discovery_(runtime, std::move(options), transport),
        request_id_prefix_(RequestIdPrefix(discovery_.backoff_seed())) {}

  Result<meta::StorageConfig> GetStorageConfig(const std::string& storage) override;
  Result<meta::WriteSession> StartWrite(std::span<const std::string> keys, const std::string& storage) override;
  Status FinishWrite(const std::string& session_id, std::span<const std::string> keys,
                     std::span<const int64_t> checksums, std::span<const uint8_t> present,
                     std::span<const meta::IovLayout> iov_layouts = {}, int64_t inline_header_version = 0) override;
  Result<std::vector<std::optional<meta::CacheLocation>>> GetLocations(std::span<const std::string> keys) override;
  Status Remove(std::span<const std::string> keys) override;
  // The node's optional "served_by" and "fencing_token" of the answer (absent from older nodes).
  Result<LocationsRead> ReadLocations(std::span<const std::string> keys) override;
  // Registers a storage on the leader (admin tooling and tests).
  Status AddStorage(const meta::StorageConfig& config);
  // The leader's registered storages, sorted by name.
  Result<std::vector<meta::StorageConfig>> ListStorages();

  LeaderDiscovery& discovery() { return discovery_; }

 private:
  // This client's part of its StartWriteCache request ids (from the discovery's seed: distinct
  // per client, reproducible in the simulator).
  static std::string RequestIdPrefix(uint64_t seed);

  LeaderDiscovery discovery_;
  const std::string request_id_prefix_;
  std::atomic<uint64_t> next_request_{1};
};

}  // namespace kvchaos::client
