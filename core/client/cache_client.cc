// Building a CacheClient from its config (see cache_client.h).
#include "core/client/cache_client.h"

namespace kvchaos::client {

Result<std::unique_ptr<CacheClient>> CacheClient::Open(const std::string& config_path, TransferClientOptions options) {
  Result<CacheClientConfig> config = LoadCacheClientConfig(config_path);
  if (!config.ok()) return config.status();
  return Open(std::move(*config), std::move(options));
}

Result<std::unique_ptr<CacheClient>> CacheClient::Open(CacheClientConfig config, TransferClientOptions options) {
  KVCHAOS_RETURN_IF_ERROR(config.Validate());
  if (!options.storage.empty() && options.storage != config.storage) {
    return Status::InvalidConfig("CacheClient: options.storage '" + options.storage + "' differs from meta.storage '" +
                                 config.storage + "' (leave it empty)");
  }
  options.storage = config.storage;
  std::unique_ptr<CacheClient> client(new CacheClient(std::move(config)));
  KVCHAOS_RETURN_IF_ERROR(client->OpenStore());
  KVCHAOS_RETURN_IF_ERROR(client->config_.indexer.empty() ? client->OpenNodeMeta() : client->OpenInProcessMeta());
  Result<std::unique_ptr<TransferClient>> transfer =
      TransferClient::Create(*client->meta_client_, *client->store_, std::move(options));
  if (!transfer.ok()) {
    if (transfer.status().code() == StatusCode::kNotFound && !client->config_.register_storage) {
      return Status::NotFound(transfer.status().message() +
                              " (register it: meta.register in the config, or kvchaos storage add)");
    }
    return transfer.status();
  }
  client->transfer_ = std::move(*transfer);
  return client;
}

CacheClient::~CacheClient() = default;

Status CacheClient::OpenStore() {
  KVCHAOS_RETURN_IF_ERROR(posix_.Setup(config_.store).WithContext("store"));
  if (config_.store.health.enabled) {
    breaker_ = std::make_unique<store::HealthBreakerStore>(Runtime::Real(), posix_, config_.store.health,
                                                           config_.store.cpu_affinity);
    store_ = breaker_.get();
  }
  return Status::Ok();
}

Status CacheClient::OpenInProcessMeta() {
  Result<std::unique_ptr<meta::MetaIndexer>> indexer = meta::OpenMetaIndexer(config_.indexer);
  if (!indexer.ok()) return indexer.status().WithContext("meta.indexer '" + config_.indexer + "'");
  indexer_ = std::move(*indexer);
  // The only writer of this index writes at the newest token it has seen: a file once written by
  // a node keeps its fence, and writes under it would all be refused.
  Result<uint64_t> token = indexer_->NewestFencingToken();
  if (!token.ok()) return token.status().WithContext("meta.indexer '" + config_.indexer + "'");
  registry_ = std::make_unique<meta::StorageRegistry>(*indexer_);
  if (Result<size_t> recovered = registry_->Recover(); !recovered.ok()) {
    return recovered.status().WithContext("meta.indexer '" + config_.indexer + "': reading the storage registry");
  }
  if (config_.register_storage) {
    KVCHAOS_RETURN_IF_ERROR(registry_->AddStorage(*config_.register_storage, *token).WithContext("meta.register"));
  }
  manager_ = std::make_unique<meta::CacheManager>(*indexer_, *registry_);
  manager_->SetFencingToken(*token);
  meta_client_ = std::make_unique<InProcessMetaClient>(*manager_, *registry_);
  return Status::Ok();
}

Status CacheClient::OpenNodeMeta() {
  LeaderDiscoveryOptions discovery;
  discovery.bootstrap = config_.nodes;
  discovery.max_attempts = config_.max_attempts;
  discovery.request_timeout_ms = config_.request_timeout_ms;
  auto http = std::make_unique<HttpMetaClient>(Runtime::Real(), std::move(discovery));
  http_meta_ = http.get();
  meta_client_ = std::move(http);
  if (config_.register_storage) {
    KVCHAOS_RETURN_IF_ERROR(http_meta_->AddStorage(*config_.register_storage).WithContext("meta.register"));
  }
  return Status::Ok();
}

}  // namespace kvchaos::client
