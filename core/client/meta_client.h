// MetaClient: how a TransferClient talks to the meta service. InProcessMetaClient calls a
// CacheManager in the same process (embedded single-node use, tests, the scrubber); the node
// issue adds an HTTP client that discovers the leader.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/meta/cache_location.h"
#include "core/meta/cache_manager.h"
#include "core/meta/storage_config.h"

namespace kvchaos::client {

// A GetLocations answer with who gave it, where the transport says (histories name the node and
// term of every read).
struct LocationsRead {
  std::vector<std::optional<meta::CacheLocation>> locations;
  std::string served_by;  // the answering node's id; "" when unknown
  uint64_t term = 0;      // the fencing token of the term it served under; 0 when unknown
};

class MetaClient {
 public:
  virtual ~MetaClient() = default;

  virtual Result<meta::StorageConfig> GetStorageConfig(const std::string& storage) = 0;
  virtual Result<meta::WriteSession> StartWrite(std::span<const std::string> keys, const std::string& storage) = 0;
  // `checksums` empty: no checksums (keeps what meta has); `present` empty: all present.
  // `iov_layouts` empty: no layouts (keeps what meta has); else one per key, the layout each
  // checksum was computed over (an unknown one stores none). `inline_header_version`: the inline
  // header the blocks were written with (0: none).
  virtual Status FinishWrite(const std::string& session_id, std::span<const std::string> keys,
                             std::span<const int64_t> checksums, std::span<const uint8_t> present,
                             std::span<const meta::IovLayout> iov_layouts = {},
                             int64_t inline_header_version = 0) = 0;
  virtual Result<std::vector<std::optional<meta::CacheLocation>>> GetLocations(std::span<const std::string> keys) = 0;
  virtual Status Remove(std::span<const std::string> keys) = 0;
  // GetLocations with the node and term that served it; this default knows neither.
  virtual Result<LocationsRead> ReadLocations(std::span<const std::string> keys) {
    auto locations = GetLocations(keys);
    if (!locations.ok()) return locations.status();
    return LocationsRead{std::move(*locations), "", 0};
  }
};

class InProcessMetaClient final : public MetaClient {
 public:
  InProcessMetaClient(meta::CacheManager& manager, meta::StorageRegistry& registry)
      : manager_(manager), registry_(registry) {}

  Result<meta::StorageConfig> GetStorageConfig(const std::string& storage) override;
  Result<meta::WriteSession> StartWrite(std::span<const std::string> keys, const std::string& storage) override;
  Status FinishWrite(const std::string& session_id, std::span<const std::string> keys,
                     std::span<const int64_t> checksums, std::span<const uint8_t> present,
                     std::span<const meta::IovLayout> iov_layouts = {}, int64_t inline_header_version = 0) override;
  Result<std::vector<std::optional<meta::CacheLocation>>> GetLocations(std::span<const std::string> keys) override;
  Status Remove(std::span<const std::string> keys) override;

 private:
  meta::CacheManager& manager_;
  meta::StorageRegistry& registry_;
};

}  // namespace kvchaos::client
