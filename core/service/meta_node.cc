// MetaNode lifecycle and the leader-only data plane (see meta_node.h).
#include "core/service/meta_node.h"

#include <spdlog/spdlog.h>

#include "core/common/rng.h"
#include "core/election/coordination_uri.h"
#include "core/service/http_api.h"

namespace kvchaos::service {

// Holds one in-flight slot of the data plane; the plane cannot be torn down while it exists.
class MetaNode::Call {
 public:
  explicit Call(MetaNode& node) : node_(node), plane_(node.Enter()) {}
  ~Call() {
    if (plane_.ok()) node_.Leave();
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  const Result<Plane>& plane() const { return plane_; }

 private:
  MetaNode& node_;
  Result<Plane> plane_;
};

MetaNode::MetaNode(Runtime& runtime, NodeConfig config, uint64_t seed)
    : runtime_(runtime), config_(std::move(config)), seed_(seed), mu_(runtime), idle_(runtime) {}

MetaNode::~MetaNode() { Stop(); }

Status MetaNode::Start() {
  // A config built in code (not read from YAML) may leave this empty; clients need a host.
  if (config_.advertised_host.empty()) {
    config_.advertised_host = config_.listen_host == "0.0.0.0" ? "127.0.0.1" : config_.listen_host;
  }
  auto backend = election::CreateCoordinationBackend(config_.coordination_uri, runtime_);
  if (!backend.ok()) return backend.status().WithContext("kvcm.coordination.uri");
  backend_ = std::move(*backend);
  // A backend that is down at start is not fatal: the elector keeps campaigning until it is up.
  if (Status s = backend_->Init(); !s.ok()) spdlog::warn("coordination backend not ready yet: {}", s.ToString());
  auto indexer = meta::OpenMetaIndexer(config_.indexer_uri);
  if (!indexer.ok()) return indexer.status().WithContext("kvcm.meta.indexer_uri");
  indexer_ = std::move(*indexer);

  http_ = std::make_unique<HttpApi>(runtime_, *this);
  auto ports = http_->Bind(config_.listen_host, config_.meta_http_port, config_.admin_http_port);
  if (!ports.ok()) {
    http_.reset();
    return ports.status();
  }
  meta_port_ = ports->first;
  admin_port_ = ports->second;
  node_id_ = config_.node_id;
  if (node_id_.empty()) {
    Rng rng(seed_);
    node_id_ = election::GenerateNodeId(config_.advertised_host, admin_port_, rng);
  }
  election::NodeEndpoint self{node_id_, config_.advertised_host, 0, meta_port_, 0, admin_port_};
  registry_ = std::make_unique<election::NodeRegistry>(runtime_, *backend_, self, Millis(config_.heartbeat_interval_ms),
                                                       Millis(config_.heartbeat_ttl_ms));
  election::LeaderElectorOptions opts;
  opts.node_id = node_id_;
  opts.lease_ms = config_.lease_ms;
  opts.loop_interval_ms = config_.loop_interval_ms;
  opts.safety_margin_ms = config_.safety_margin_ms;
  opts.forbid_campaign_time_ms = config_.forbid_campaign_time_ms;
  election::LeaderElectorCallbacks callbacks{[this](election::FencingToken t) { OnBecomeLeader(t); },
                                             [this] { OnNoLongerLeader(); }};
  elector_ = std::make_unique<election::LeaderElector>(runtime_, *backend_, opts, callbacks);

  Status s = registry_->Start();
  if (s.ok()) s = elector_->Start();
  if (s.ok()) s = http_->Serve();
  if (!s.ok()) {
    Stop();
    return s;
  }
  spdlog::info("node '{}' up: meta http {}:{}, admin http {}:{}, coordination '{}', indexer {}", node_id_,
               config_.listen_host, meta_port_, config_.listen_host, admin_port_,
               config_.coordination_uri.empty() ? "memory://" : "(configured)", indexer_->Describe());
  return Status::Ok();
}

void MetaNode::Stop() {
  // HTTP first, so no new request arrives while the node resigns.
  if (http_) http_->Stop();
  if (elector_) elector_->Stop();
  if (registry_) registry_->Stop();
}

void MetaNode::OnBecomeLeader(election::FencingToken token) {
  auto storages = std::make_unique<meta::StorageRegistry>(*indexer_);
  auto loaded = storages->Recover();
  if (!loaded.ok()) {
    // Serving without the registry would answer "unknown storage" for storages that exist, so
    // the node stays disabled; the elector keeps it LEADER and a later term retries.
    spdlog::error("node '{}': term {} cannot recover the storage registry: {}", node_id_, token,
                  loaded.status().ToString());
    return;
  }
  auto keys = indexer_->ListKeys(meta::CacheManager::kKeyPrefix);
  auto cache = std::make_unique<meta::CacheManager>(*indexer_, *storages);
  cache->SetFencingToken(token);
  MutexLock lock(mu_);
  storages_ = std::move(storages);
  cache_ = std::move(cache);
  token_ = token;
  serving_ = true;
  spdlog::info("node '{}': leader with token {} ({} storages, {} cache entries recovered)", node_id_, token, *loaded,
               keys.ok() ? std::to_string(keys->size()) : "?");
}

void MetaNode::OnNoLongerLeader() {
  MutexLock lock(mu_);
  serving_ = false;
  idle_.Wait(mu_, [this]() REQUIRES(mu_) { return in_flight_ == 0; });
  cache_.reset();
  storages_.reset();
  token_ = 0;
  spdlog::info("node '{}': no longer leader, data plane disabled", node_id_);
}

Result<MetaNode::Plane> MetaNode::Enter() {
  // The lease deadline, checked per request: a node whose lease ran out never serves, even
  // before its demote callback has run.
  bool leader = elector_ && elector_->IsLeader();
  MutexLock lock(mu_);
  if (!leader || !serving_) return Status::NotLeader("node '" + node_id_ + "' is not the leader");
  ++in_flight_;
  return Plane{storages_.get(), cache_.get(), token_};
}

void MetaNode::Leave() {
  MutexLock lock(mu_);
  if (--in_flight_ == 0) idle_.NotifyAll();
}

nlohmann::json MetaNode::LeaderEndpointJson() {
  if (!registry_) return nullptr;
  auto leader = registry_->GetLeaderEndpoint();
  if (!leader.ok() || !leader->has_value()) return nullptr;
  return nlohmann::json::parse(election::NodeEndpointToJson(**leader));
}

nlohmann::json MetaNode::ClusterInfo(bool manager) {
  election::LeadershipSnapshot snap = elector_->Snapshot();
  nlohmann::json leader = LeaderEndpointJson();
  nlohmann::json j = {{"self_id", node_id_},
                      {"leader_id", leader.is_null() ? std::string() : leader.value("node_id", std::string())},
                      {"leader_endpoint", leader}};
  if (manager) {
    j["state"] = std::string(election::ElectorStateName(snap.state));
    j["is_leader"] = snap.is_leader;
    j["fencing_token"] = snap.token;
    j["lease_expiry_wall_ms"] = snap.lease_deadline_wall
                                    ? nlohmann::json(ToMillis(snap.lease_deadline_wall->time_since_epoch()))
                                    : nlohmann::json(nullptr);
    j["info_time_wall_ms"] = ToMillis(runtime_.WallNow().time_since_epoch());
  }
  return j;
}

nlohmann::json MetaNode::Health() {
  bool leader = elector_->IsLeader();
  bool serving;
  {
    MutexLock lock(mu_);
    serving = serving_;
  }
  return {{"node_id", node_id_}, {"healthy", true}, {"is_leader", leader}, {"serving", leader && serving}};
}

Result<nlohmann::json> MetaNode::ListNodes() {
  auto nodes = registry_->ListLiveNodes();
  if (!nodes.ok()) return nodes.status();
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& n : *nodes) {
    nlohmann::json e = nlohmann::json::parse(election::NodeEndpointToJson(n.endpoint));
    e["heartbeat_wall_ms"] = n.heartbeat_wall_ms;
    arr.push_back(std::move(e));
  }
  return nlohmann::json{{"nodes", std::move(arr)}};
}

Status MetaNode::Demote(std::optional<Duration> forbid_campaign) { return elector_->Demote(forbid_campaign); }

Result<meta::WriteSession> MetaNode::StartWriteCache(std::span<const std::string> keys, const std::string& storage) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  return call.plane()->cache->StartWriteCache(keys, storage);
}

Status MetaNode::FinishWriteCache(const std::string& session_id, std::span<const std::string> keys,
                                  std::span<const int64_t> checksums, std::span<const uint8_t> present) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  return call.plane()->cache->FinishWriteCache(session_id, keys, checksums, present);
}

Result<std::vector<std::optional<meta::CacheLocation>>> MetaNode::GetCacheLocation(std::span<const std::string> keys) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  return call.plane()->cache->GetCacheLocation(keys);
}

Status MetaNode::RemoveCache(std::span<const std::string> keys) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  return call.plane()->cache->RemoveCache(keys);
}

Status MetaNode::AddStorage(const meta::StorageConfig& config) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  return call.plane()->storages->AddStorage(config, call.plane()->token);
}

Result<meta::StorageConfig> MetaNode::GetStorageConfig(const std::string& name) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  auto config = call.plane()->storages->Get(name);
  if (!config) return Status::NotFound("storage '" + name + "' is not registered");
  return *config;
}

}  // namespace kvchaos::service
