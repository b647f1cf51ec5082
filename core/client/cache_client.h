// CacheClient: the one entry point for a service that embeds kvchaos. From one config
// (cache_client_config.h: the store's YAML keys plus where meta is) it builds everything a
// checksummed Save/Load needs and hands back a ready TransferClient:
//
//   auto client = kvchaos::client::CacheClient::Open("client.yaml");   // or Open(CacheClientConfig)
//   if (!client.ok()) { /* InvalidConfig names file:line: key; other errors say what failed */ }
//   kvchaos::Result<kvchaos::client::SaveResult> saved = (*client)->Save(keys, blocks);
//   kvchaos::client::LoadResult loaded = (*client)->Load(keys, blocks);  // loaded.status: ChecksumMismatch, ...
//
// What Open builds, in order (each step's failure is returned and everything built is torn down):
//   1. the PosixStore (store::PosixStore::Setup: every backend path probed), wrapped in the outer
//      health breaker when store_health.enabled (store::HealthBreakerStore);
//   2. the meta service, one of:
//      - in-process (meta.indexer): the indexer (meta::OpenMetaIndexer), the storage registry
//        recovered from it, a CacheManager writing with the newest fencing token the index has
//        seen — this process is the index's only writer, so never point it at an index a node
//        cluster serves (use meta.nodes for that) — and an InProcessMetaClient;
//      - a cluster (meta.nodes): an HttpMetaClient that discovers the leader and follows it
//        across failovers (leader_discovery.h);
//   3. the storage registered when the config asks for it (meta.register);
//   4. the TransferClient, with block and shard sizes taken from the store.
//
// Buffers: a block is the store's block_size bytes, given as IOVs (BlockBuffers) that add up to
// it; block_size() says how many. Thread-safe as TransferClient is; the CacheClient must outlive
// every call. docs/embedding.md walks through an example (examples/embedding/).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "core/client/cache_client_config.h"
#include "core/client/http_meta_client.h"
#include "core/client/meta_client.h"
#include "core/client/transfer_client.h"
#include "core/meta/cache_manager.h"
#include "core/meta/meta_indexer.h"
#include "core/meta/storage_registry.h"
#include "core/store/health_breaker_store.h"
#include "core/store/posix_store.h"

namespace kvchaos::client {

class CacheClient {
 public:
  // `options`: the TransferClient's hooks and switches (on_mismatch, verify_meta_round_trip,
  // drop_lost_entries). Its storage, block_size and shard_size come from `config` and the store:
  // leave them empty and 0 (InvalidConfig when they differ).
  static Result<std::unique_ptr<CacheClient>> Open(CacheClientConfig config, TransferClientOptions options = {});
  // LoadCacheClientConfig(path), then Open.
  static Result<std::unique_ptr<CacheClient>> Open(const std::string& config_path, TransferClientOptions options = {});

  ~CacheClient();
  CacheClient(const CacheClient&) = delete;
  CacheClient& operator=(const CacheClient&) = delete;

  // TransferClient::Save and LoadDetailed.
  Result<SaveResult> Save(std::span<const std::string> keys, std::span<const BlockBuffers> blocks) {
    return transfer_->Save(keys, blocks);
  }
  LoadResult Load(std::span<const std::string> keys, std::span<const BlockBuffers> blocks) {
    return transfer_->LoadDetailed(keys, blocks);
  }

  uint64_t block_size() const { return transfer_->block_size(); }
  TransferClient& transfer() { return *transfer_; }
  MetaClient& meta() { return *meta_client_; }
  // The node client when meta is a cluster (meta.nodes); null for an in-process meta.
  HttpMetaClient* nodes() { return http_meta_; }
  store::PosixStore& posix_store() { return posix_; }
  const CacheClientConfig& config() const { return config_; }

 private:
  explicit CacheClient(CacheClientConfig config) : config_(std::move(config)) {}
  Status OpenStore();
  Status OpenInProcessMeta();
  Status OpenNodeMeta();

  CacheClientConfig config_;
  // Declared in build order, so they are torn down in reverse: the TransferClient first, the
  // store's threads last.
  store::PosixStore posix_;
  std::unique_ptr<store::HealthBreakerStore> breaker_;
  store::Store* store_ = &posix_;
  std::unique_ptr<meta::MetaIndexer> indexer_;
  std::unique_ptr<meta::StorageRegistry> registry_;
  std::unique_ptr<meta::CacheManager> manager_;
  std::unique_ptr<MetaClient> meta_client_;
  HttpMetaClient* http_meta_ = nullptr;  // meta_client_, when it is one
  std::unique_ptr<TransferClient> transfer_;
};

}  // namespace kvchaos::client
