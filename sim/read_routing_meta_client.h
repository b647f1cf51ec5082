// ReadRoutingMetaClient: a client::MetaClient that sends its reads (GetLocations, ReadLocations) to
// one MetaClient and every other call to another. The simulator's data plane uses it with
// SimDataPlane::sticky_reads: the reads go through a second HttpMetaClient with its own leader
// discovery, so the client keeps reading from the node that last answered a read until that node
// refuses one — a client whose read path and write path find the leader apart. Against correct
// nodes that changes nothing (a deposed leader or a follower answers NotLeader and the reader
// rediscovers); it is how a client reaches a node that answers reads it should refuse (the planted
// bugs deposed-leader-reads and follower-cached-reads).
#pragma once

#include "core/client/meta_client.h"

namespace kvchaos::sim {

class ReadRoutingMetaClient final : public client::MetaClient {
 public:
  ReadRoutingMetaClient(client::MetaClient& writes, client::MetaClient& reads) : writes_(writes), reads_(reads) {}

  Result<meta::StorageConfig> GetStorageConfig(const std::string& storage) override {
    return writes_.GetStorageConfig(storage);
  }
  Result<meta::WriteSession> StartWrite(std::span<const std::string> keys, const std::string& storage) override {
    return writes_.StartWrite(keys, storage);
  }
  Status FinishWrite(const std::string& session_id, std::span<const std::string> keys,
                     std::span<const int64_t> checksums, std::span<const uint8_t> present,
                     std::span<const meta::IovLayout> iov_layouts = {}, int64_t inline_header_version = 0) override {
    return writes_.FinishWrite(session_id, keys, checksums, present, iov_layouts, inline_header_version);
  }
  Result<std::vector<std::optional<meta::CacheLocation>>> GetLocations(std::span<const std::string> keys) override {
    return reads_.GetLocations(keys);
  }
  Result<client::LocationsRead> ReadLocations(std::span<const std::string> keys) override {
    return reads_.ReadLocations(keys);
  }
  Status Remove(std::span<const std::string> keys) override { return writes_.Remove(keys); }

 private:
  client::MetaClient& writes_;
  client::MetaClient& reads_;
};

}  // namespace kvchaos::sim
