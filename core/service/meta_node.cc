// MetaNode lifecycle and the leader-only data plane (see meta_node.h).
#include "core/service/meta_node.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/common/rng.h"
#include "core/election/coordination_uri.h"
#include "core/service/node_health.h"

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

MetaNode::MetaNode(Runtime& runtime, NodeConfig config, uint64_t seed, MetaNodeParts parts)
    : runtime_(runtime),
      config_(std::move(config)),
      seed_(seed),
      parts_(std::move(parts)),
      leader_mu_(runtime),
      mu_(runtime),
      idle_(runtime),
      wake_(runtime) {}

MetaNode::~MetaNode() { Stop(); }

Status MetaNode::Start(int meta_http_port, int admin_http_port) {
  started_at_ = runtime_.Now();
  advertised_ = ChooseAdvertisedHost(config_.advertised_host, config_.listen_host,
                                     parts_.host_lookup ? *parts_.host_lookup : HostLookup::System());
  if (advertised_.source == "fallback") {
    spdlog::warn("advertised host: 127.0.0.1 (listen_host '{}' binds every interface and the host name does not "
                 "resolve); only clients on this machine can reach the node: set kvcm.service.advertised_host",
                 config_.listen_host);
  } else if (advertised_.source != "kvcm.service.advertised_host") {
    spdlog::info("advertised host: {} (from {}; kvcm.service.advertised_host is unset)", advertised_.host,
                 advertised_.source == "listen_host" ? "the bind address kvcm.service.listen_host" : "the host name");
  }
  config_.advertised_host = advertised_.host;
  if (config_.testing.serve_without_lease_check) {
    spdlog::warn("TESTING KNOB ON: kvcm.testing.serve_without_lease_check — the data plane skips the lease check "
                 "and keeps serving after leadership is lost; only the fencing token protects the data");
  }

  std::unique_ptr<election::CoordinationBackend> inner = std::move(parts_.backend);
  if (!inner) {
    auto backend = election::CreateCoordinationBackend(config_.coordination_uri, runtime_);
    if (!backend.ok()) return backend.status().WithContext("kvcm.coordination.uri");
    inner = std::move(*backend);
  }
  backend_ = std::make_unique<WatchedBackend>(runtime_, std::move(inner));
  // A backend that is down at start is not fatal: the elector keeps campaigning until it is up.
  if (Status s = backend_->Init(); !s.ok()) spdlog::warn("coordination backend not ready yet: {}", s.ToString());
  indexer_ = std::move(parts_.indexer);
  if (!indexer_) {
    auto indexer = meta::OpenMetaIndexer(config_.indexer_uri);
    if (!indexer.ok()) return indexer.status().WithContext("kvcm.meta.indexer_uri");
    indexer_ = std::move(*indexer);
  }

  meta_port_ = meta_http_port;
  admin_port_ = admin_http_port;
  node_id_ = config_.node_id;
  if (node_id_.empty()) {
    Rng rng(seed_);
    node_id_ = election::GenerateNodeId(config_.advertised_host, admin_port_, rng);
  }
  registry_ = std::make_unique<election::NodeRegistry>(runtime_, *backend_, SelfEndpoint(),
                                                       Millis(config_.heartbeat_interval_ms),
                                                       Millis(config_.heartbeat_ttl_ms));
  election::LeaderElectorOptions opts;
  opts.node_id = node_id_;
  opts.lease_ms = config_.lease_ms;
  opts.loop_interval_ms = config_.loop_interval_ms;
  opts.safety_margin_ms = config_.safety_margin_ms;
  opts.forbid_campaign_time_ms = config_.forbid_campaign_time_ms;
  opts.testing = config_.testing.elector;
  election::LeaderElectorCallbacks callbacks{[this](election::FencingToken t) { OnBecomeLeader(t); },
                                             [this] { OnNoLongerLeader(); }, parts_.on_elector_state};
  elector_ = std::make_unique<election::LeaderElector>(runtime_, *backend_, opts, callbacks);

  Status s = registry_->Start();
  if (s.ok()) s = elector_->Start();
  if (!s.ok()) {
    Stop();
    return s;
  }
  spdlog::info("node '{}' up: advertised as {} (meta port {}, admin port {}), coordination '{}', indexer {}",
               node_id_, config_.advertised_host, meta_port_, admin_port_,
               config_.coordination_uri.empty() ? "memory://" : "(configured)", indexer_->Describe());
  return Status::Ok();
}

void MetaNode::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;  // ends a recovery backoff, so the elector's Stop does not wait it out
    wake_.NotifyAll();
  }
  if (elector_) elector_->Stop();
  if (registry_) registry_->Stop();
}

void MetaNode::OnBecomeLeader(election::FencingToken token) {
  terms_led_.fetch_add(1, std::memory_order_relaxed);
  // Runs on kvc_transition while the elector is PROMOTING: the lock thread keeps renewing the
  // lease meanwhile, so a transient indexer error is retried within the term instead of leaving
  // a leader that serves nothing until the next election.
  Rng jitter = Rng(seed_).Split("recovery").Split(token);
  const MonoTime begun = runtime_.Now();
  const MonoTime give_up = begun + Millis(config_.lease_ms);
  const Duration max_step = Millis(std::max<int64_t>(config_.loop_interval_ms, config_.lease_ms / 4));
  Duration step = Millis(config_.loop_interval_ms);
  {
    MutexLock lock(mu_);
    recovering_ = true;
    recovery_failures_ = 0;
    recovery_error_.clear();
  }
  struct Done {
    MetaNode& node;
    ~Done() {
      MutexLock lock(node.mu_);
      node.recovering_ = false;
    }
  } done{*this};
  // The term's token as recovery leaves it: RecoverTerm may raise it above the index's newest
  // (a coordination backend that lost its counter), and later checks compare with that one.
  election::FencingToken term_token = token;
  election::FencingToken fenced = 0;  // the token an earlier attempt raised the index's fence to
  for (int attempt = 1;; ++attempt) {
    Status s = RecoverTerm(&term_token, &fenced);
    if (s.ok()) return;
    {
      MutexLock lock(mu_);
      recovery_failures_ = attempt;
      recovery_error_ = s.ToString();
    }
    const MonoTime now = runtime_.Now();
    if (elector_->Snapshot().token != term_token) {
      spdlog::warn("node '{}': term with token {} ended before recovery succeeded ({} attempts): {}", node_id_, token,
                   attempt, s.ToString());
      return;
    }
    if (now >= give_up) {
      spdlog::error("node '{}': recovery failed {} times in {} ms (last: {}); demoting so another node can lead",
                    node_id_, attempt, ToMillis(now - begun), s.ToString());
      // The elector ends the term and releases the lock; the demote path follows this callback.
      if (Status d = elector_->Demote(Millis(config_.lease_ms)); !d.ok()) {
        spdlog::warn("node '{}': self-demotion after failed recovery: {}", node_id_, d.ToString());
      }
      return;
    }
    // Equal jitter: at least half the step, so retries back off, never all at once across terms.
    const Duration wait = Duration(jitter.UniformInt(step.count() / 2, step.count()));
    spdlog::warn("node '{}': recovery attempt {} for token {} failed, retrying in {} ms: {}", node_id_, attempt, token,
                 ToMillis(wait), s.ToString());
    step = std::min(step * 2, max_step);
    MutexLock lock(mu_);
    const MonoTime until = std::min(now + wait, give_up);
    while (!stopping_ && wake_.WaitUntil(mu_, until)) {
    }
    if (stopping_) return;
  }
}

Status MetaNode::RecoverTerm(election::FencingToken* term_token, election::FencingToken* fenced) {
  // Fence first, before reading anything: once the index's fence is at this term's token, a
  // zombie of an older term cannot change what the recovery below reads.
  auto newest = indexer_->NewestFencingToken();
  if (!newest.ok()) return newest.status().WithContext("reading the meta index's newest fencing token");
  // A newest token equal to ours is a zombie's with the same token (a counter reset), unless an
  // earlier attempt of this term put it there: then the term is fenced already.
  const bool ours = *fenced != 0 && *newest == *fenced && *fenced == *term_token;
  if (!ours && !config_.testing.skip_recovery_fence) {
    auto raised = elector_->RaiseTokenAbove(*term_token, *newest);
    if (!raised.ok()) return raised.status();
    *term_token = *raised;
    if (Status f = indexer_->RaiseFence(*term_token); !f.ok()) {
      return f.WithContext("raising the meta index's fence to token " + std::to_string(*term_token));
    }
    *fenced = *term_token;
  }
  const election::FencingToken token = *term_token;
  auto storages = std::make_unique<meta::StorageRegistry>(*indexer_);
  auto loaded = storages->Recover();
  if (!loaded.ok()) return loaded.status().WithContext("recovering the storage registry");
  auto cache = std::make_unique<meta::CacheManager>(*indexer_, *storages, runtime_, &parsed_entries_);
  cache->SetFencingToken(token);
  cache->SetSoleIssuerOfToken(true);  // this term's token is ours alone (raised above any other)
  MutexLock lock(mu_);
  // A plane kept by a testing knob may still be in use: swap only once its calls are done.
  serving_ = false;
  while (in_flight_ != 0) idle_.Wait(mu_);
  storages_ = std::move(storages);
  cache_ = std::move(cache);
  token_ = token;
  serving_ = true;
  spdlog::info("node '{}': leader with token {} ({} storages recovered{})", node_id_, token, *loaded,
               recovery_failures_ > 0 ? " after " + std::to_string(recovery_failures_) + " failed attempts" : "");
  return Status::Ok();
}

void MetaNode::OnNoLongerLeader() {
  MutexLock lock(mu_);
  if (config_.testing.serve_without_lease_check && !stopping_) {
    spdlog::warn("node '{}': TESTING KNOB: keeps serving the data plane of token {} after losing leadership",
                 node_id_, token_);
    return;
  }
  serving_ = false;
  while (in_flight_ != 0) idle_.Wait(mu_);
  cache_.reset();
  storages_.reset();
  token_ = 0;
  spdlog::info("node '{}': no longer leader, data plane disabled", node_id_);
}

Result<MetaNode::Plane> MetaNode::Enter() {
  // The lease deadline, checked per request: a node whose lease ran out never serves, even
  // before its demote callback has run. (The testing knob skips exactly this check.)
  bool leader = config_.testing.serve_without_lease_check || (elector_ && elector_->IsLeader());
  MutexLock lock(mu_);
  if (!leader || !serving_) {
    if (recovering_ && recovery_failures_ > 0) {
      return Status::NotLeader("node '" + node_id_ + "' won the election but has not recovered yet (" +
                               std::to_string(recovery_failures_) + " failed attempts; last: " + recovery_error_ + ")");
    }
    return Status::NotLeader("node '" + node_id_ + "' is not the leader");
  }
  ++in_flight_;
  return Plane{storages_.get(), cache_.get(), token_};
}

void MetaNode::Leave() {
  MutexLock lock(mu_);
  if (--in_flight_ == 0) idle_.NotifyAll();
}

election::NodeEndpoint MetaNode::SelfEndpoint() const {
  // What clients are told to call: the advertised ports where a forward or proxy sits in front.
  const int meta = config_.advertised_meta_port != 0 ? config_.advertised_meta_port : meta_port_;
  const int admin = config_.advertised_admin_port != 0 ? config_.advertised_admin_port : admin_port_;
  return election::NodeEndpoint{node_id_, config_.advertised_host, 0, meta, 0, admin};
}

nlohmann::json MetaNode::SelfEndpointJson() const { return election::NodeEndpointJson(SelfEndpoint()); }

LeaderView MetaNode::Leader() {
  if (!backend_ || !registry_) return {};
  const election::LeadershipSnapshot snap = elector_->Snapshot();
  // A leader names itself; no coordination call is needed to know that.
  if (snap.is_leader) return LeaderView{node_id_, SelfEndpointJson()};
  const MonoTime now = runtime_.Now();
  const Duration loop = Millis(elector_->options().loop_interval_ms);
  // A follower's elector reads the lock holder every loop interval as it campaigns.
  const bool observed = snap.observed_leader_at && now - *snap.observed_leader_at <= loop &&
                        snap.observed_leader_id != node_id_;
  {
    MutexLock lock(leader_mu_);
    if (leader_view_at_ && leader_view_.id != node_id_) {
      const Duration age = now - *leader_view_at_;
      // The holder the elector just read, with the endpoint the registry gave within a heartbeat
      // interval (endpoints change only when a node restarts); else a view one loop old at most.
      if (observed ? leader_view_.id == snap.observed_leader_id && age < Millis(config_.heartbeat_interval_ms)
                   : age < loop) {
        return leader_view_;
      }
    }
  }
  LeaderView v = LookUpLeader();
  // A leader that has not published its endpoint yet will soon: look again next time.
  const bool unpublished = !v.id.empty() && v.endpoint.is_null();
  MutexLock lock(leader_mu_);
  leader_view_ = v;
  leader_view_at_ = unpublished ? std::nullopt : std::optional<MonoTime>(now);
  return v;
}

LeaderView MetaNode::LookUpLeader() {
  LeaderView v;
  auto holder = backend_->GetLockHolder(elector_->options().lock_key, election::kNoDeadline);
  if (!holder.ok()) {
    // The backend is unreachable; this node still knows for sure when its own lease is valid.
    if (elector_->IsLeader()) {
      v.id = node_id_;
      v.endpoint = SelfEndpointJson();
    }
    return v;
  }
  v.id = holder->holder;
  if (v.id.empty()) return v;
  // The lock names the leader at once; its endpoint appears once it has published its info.
  auto info = registry_->GetNodeInfo(v.id);
  if (info.ok()) v.endpoint = election::NodeEndpointJson(*info);
  return v;
}

nlohmann::json MetaNode::LeaderEndpointJson() { return Leader().endpoint; }

nlohmann::json MetaNode::ClusterInfo(bool manager) {
  election::LeadershipSnapshot snap = elector_->Snapshot();
  LeaderView leader = Leader();
  nlohmann::json j = {{"self_id", node_id_}, {"leader_id", leader.id}, {"leader_endpoint", leader.endpoint}};
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
  election::LeadershipSnapshot snap = elector_->Snapshot();
  HealthInputs in;
  in.max_age = Millis(config_.loop_interval_ms) * config_.health_max_silence_loops;
  in.started_at = started_at_;
  FillElectorHealth(snap, backend_->last_answer(), &in);
  if (in.holds_term) {
    // The cheapest read every indexer has: one value, no scan.
    const MonoTime before = runtime_.Now();
    auto newest = indexer_->NewestFencingToken();
    in.indexer_ping_latency = runtime_.Now() - before;
    in.indexer_ping = newest.ok() ? Status::Ok() : newest.status();
  }
  {
    MutexLock lock(mu_);
    in.data_plane_enabled = serving_;
    in.data_plane_detail = recovery_failures_ > 0 ? "recovering (" + std::to_string(recovery_failures_) +
                                                        " failed attempts; last: " + recovery_error_ + ")"
                                                  : "promotion in progress";
  }
  if (config_.testing.serve_without_lease_check) in.testing_knobs = "kvcm.testing.serve_without_lease_check";
  in.now = runtime_.Now();
  HealthReport report = EvaluateHealth(in);
  nlohmann::json j = {{"node_id", node_id_},
                      {"healthy", report.healthy},
                      {"state", std::string(election::ElectorStateName(snap.state))},
                      {"is_leader", snap.is_leader},
                      {"serving", snap.is_leader && in.data_plane_enabled},
                      {"checks", report.ChecksJson()}};
  if (!report.healthy) j["problems"] = report.Problems();
  return j;
}

Result<nlohmann::json> MetaNode::ListNodes() {
  auto nodes = registry_->ListLiveNodes();
  if (!nodes.ok()) return nodes.status();
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& n : *nodes) {
    nlohmann::json e = election::NodeEndpointJson(n.endpoint);
    e["heartbeat_wall_ms"] = n.heartbeat_wall_ms;
    arr.push_back(std::move(e));
  }
  return nlohmann::json{{"nodes", std::move(arr)}};
}

Status MetaNode::Demote(std::optional<Duration> forbid_campaign) { return elector_->Demote(forbid_campaign); }

void MetaNode::StepDownIfFencedOut(uint64_t token, const Status& status) {
  if (status.code() != StatusCode::kStaleFencingToken) return;
  // Refused although this node still leads with that token: a newer token reached the index (an
  // older term that raised the fence late, after a coordination wipe reset the counter). This
  // term can never write again; it steps down so that the next term fences above the index.
  if (!elector_->IsLeader() || elector_->CurrentToken() != token) return;  // the term is over anyway
  spdlog::error("node '{}': the meta index refused this leader's own token {} ({}); stepping down so that a new "
                "term fences above the index's newest token",
                node_id_, token, status.message());
  if (Status d = elector_->Demote(Millis(config_.loop_interval_ms)); !d.ok() && d.code() != StatusCode::kNotLeader) {
    spdlog::warn("node '{}': stepping down after a refused token: {}", node_id_, d.ToString());
  }
}

Result<meta::WriteSession> MetaNode::StartWriteCache(std::span<const std::string> keys, const std::string& storage,
                                                     const std::string& request_id) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  auto r = call.plane()->cache->StartWriteCache(keys, storage, request_id);
  if (!r.ok()) StepDownIfFencedOut(call.plane()->token, r.status());
  return r;
}

Status MetaNode::FinishWriteCache(const std::string& session_id, std::span<const std::string> keys,
                                  std::span<const int64_t> checksums, std::span<const uint8_t> present,
                                  std::span<const meta::IovLayout> iov_layouts, int64_t inline_header_version) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  Status s =
      call.plane()->cache->FinishWriteCache(session_id, keys, checksums, present, iov_layouts, inline_header_version);
  StepDownIfFencedOut(call.plane()->token, s);
  return s;
}

Result<std::vector<std::optional<meta::CacheLocation>>> MetaNode::GetCacheLocation(std::span<const std::string> keys,
                                                                                    uint64_t* served_token) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  if (served_token != nullptr) *served_token = call.plane()->token;
  return call.plane()->cache->GetCacheLocation(keys);
}

Status MetaNode::RemoveCache(std::span<const std::string> keys) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  Status s = call.plane()->cache->RemoveCache(keys);
  StepDownIfFencedOut(call.plane()->token, s);
  return s;
}

Status MetaNode::AddStorage(const meta::StorageConfig& config) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  Status s = call.plane()->storages->AddStorage(config, call.plane()->token);
  StepDownIfFencedOut(call.plane()->token, s);
  return s;
}

Result<meta::StorageConfig> MetaNode::GetStorageConfig(const std::string& name) {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  auto config = call.plane()->storages->Get(name);
  if (!config) return Status::NotFound("storage '" + name + "' is not registered");
  return *config;
}

Result<std::vector<meta::StorageConfig>> MetaNode::ListStorages() {
  Call call(*this);
  if (!call.plane().ok()) return call.plane().status();
  return call.plane()->storages->List();
}

}  // namespace kvchaos::service
