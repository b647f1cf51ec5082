// The meta index as a service of the simulated world (in production the nodes share a Redis or a
// file as their meta indexer). The server, SimMetaIndex, is the production meta::LocalMetaIndexer
// (in memory) on its own host — so its fence check is core/meta/fence.h, the one every indexer
// uses — and SimMetaIndexClient implements meta::MetaIndexer over the simulated network, so
// MetaNode's recovery, StorageRegistry and CacheManager run unchanged against it.
//
// Ground truth, kept beside the indexer and independent of its check: a write is *stale* when a
// newer token was already presented to the index, whether or not the fence let it through (so
// "stale writes accepted" is measured, not assumed); and a write the fence refused although its
// node held the leader lock with that very token is a leader that cannot write (liveness).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/meta/local_meta_indexer.h"
#include "core/meta/meta_indexer.h"
#include "sim/sim_rpc.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

struct MetaIndexCounters {
  uint64_t writes = 0;  // fenced calls: Put, Delete, RaiseFence
  uint64_t accepted = 0;
  uint64_t rejected = 0;            // refused by the fence
  uint64_t stale_accepted = 0;      // safety violation: a write older than a presented token went in
  uint64_t stale_rejected = 0;      // the fence doing its job
  uint64_t holder_writes_rejected = 0;  // the lock holder's own token refused
};

// One request to the index (what the client sends).
struct MetaIndexRequest {
  enum class Op : uint8_t { kPut, kDelete, kGet, kListKeys, kNewest, kRaiseFence };
  Op op = Op::kGet;
  uint64_t token = 0;
  std::vector<meta::MetaWrite> writes;  // kPut
  std::vector<std::string> keys;        // kDelete, kGet; kListKeys: keys[0] is the prefix
  std::vector<std::string> expected_write_ids;  // kDelete: empty, or one per key
  std::string delete_id;                        // kDelete: "" or the delete's own write id
  int from_host = -1;
};

struct MetaIndexReply {
  Status status;
  std::vector<std::optional<meta::MetaRecord>> records;
  std::vector<std::string> keys;
  uint64_t token = 0;
};

class SimMetaIndex {
 public:
  // `holds_lock(host, token)`: whether the node on `host` holds the leader lock with `token` now.
  // `knobs`: a planted bug in the production indexer.
  SimMetaIndex(SimRuntime& runtime, int host, std::function<bool(int host, uint64_t token)> holds_lock,
               meta::LocalMetaIndexer::TestingKnobs knobs = {});

  int host() const { return host_; }
  // Applies one request on the scheduler context (the client's serve callback).
  MetaIndexReply Apply(const MetaIndexRequest& request);
  meta::MetaIndexer& indexer() { return indexer_; }
  const MetaIndexCounters& counters() const { return counters_; }

 private:
  void Observe(const MetaIndexRequest& request, const Status& status);

  SimRuntime& runtime_;
  const int host_;
  std::function<bool(int, uint64_t)> holds_lock_;
  meta::LocalMetaIndexer indexer_;
  uint64_t max_presented_ = 0;
  MetaIndexCounters counters_;
};

struct SimMetaIndexClientOptions {
  int64_t timeout_ms = 500;
  int retry_count = 1;
};

class SimMetaIndexClient final : public meta::MetaIndexer {
 public:
  SimMetaIndexClient(SimRuntime& runtime, SimNetwork& network, SimMetaIndex& index, int host,
                     SimMetaIndexClientOptions options = {});

  void CutOff() { rpc_.CutOff(); }

  std::string Describe() const override;
  Status Put(uint64_t fencing_token, std::span<const meta::MetaWrite> writes) override;
  Status Delete(uint64_t fencing_token, std::span<const std::string> keys,
                std::span<const std::string> expected_write_ids = {}, std::string_view delete_id = {}) override;
  Result<std::vector<std::optional<meta::MetaRecord>>> Get(std::span<const std::string> keys) override;
  Result<std::vector<std::string>> ListKeys(std::string_view prefix) override;
  Result<uint64_t> NewestFencingToken() override;
  Status RaiseFence(uint64_t fencing_token) override;

 private:
  // Sends with retries on timeout, as the production Redis indexer does.
  MetaIndexReply Call(MetaIndexRequest request);

  SimRuntime& runtime_;
  SimMetaIndex& index_;
  const int host_;
  const SimMetaIndexClientOptions options_;
  SimRpc<MetaIndexReply> rpc_;
};

}  // namespace kvchaos::sim
