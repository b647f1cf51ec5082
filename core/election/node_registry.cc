// Node endpoints, heartbeats and leader lookup (see the header).
#include "core/election/node_registry.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/common/json_text.h"

namespace kvchaos::election {

namespace {
constexpr const char* kPortFields[] = {"meta_rpc_port", "meta_http_port", "admin_rpc_port", "admin_http_port"};

Result<NodeEndpoint> FromJson(const nlohmann::json& j, std::string_view where) {
  auto bad = [&](const std::string& problem) {
    return Status::InvalidArgument(std::string(where) + ": " + problem);
  };
  if (!j.is_object()) return bad("expected a JSON object");
  NodeEndpoint e;
  for (const char* field : {"node_id", "host"}) {
    auto it = j.find(field);
    if (it == j.end()) return bad(std::string("field '") + field + "' is missing");
    if (!it->is_string()) return bad(std::string("field '") + field + "' must be a string");
  }
  e.node_id = j["node_id"].get<std::string>();
  e.host = j["host"].get<std::string>();
  if (e.node_id.empty()) return bad("field 'node_id' is empty");
  int* ports[] = {&e.meta_rpc_port, &e.meta_http_port, &e.admin_rpc_port, &e.admin_http_port};
  for (size_t i = 0; i < 4; ++i) {
    auto it = j.find(kPortFields[i]);
    if (it == j.end()) continue;  // upstream nodes may not serve every port
    if (!it->is_number_integer()) return bad(std::string("field '") + kPortFields[i] + "' must be an integer");
    const int64_t v = it->get<int64_t>();
    if (v < 0 || v > 65535) return bad(std::string("field '") + kPortFields[i] + "' = " + std::to_string(v) + " is not a port");
    *ports[i] = static_cast<int>(v);
  }
  return e;
}

std::string InfoKey(std::string_view node_id) { return std::string(kNodeInfoKeyPrefix) + std::string(node_id); }
std::string HeartbeatKey(std::string_view node_id) {
  return std::string(kNodeHeartbeatKeyPrefix) + std::string(node_id);
}
}  // namespace

nlohmann::json NodeEndpointJson(const NodeEndpoint& e) {
  return {{"node_id", e.node_id},
          {"host", e.host},
          {"meta_rpc_port", e.meta_rpc_port},
          {"meta_http_port", e.meta_http_port},
          {"admin_rpc_port", e.admin_rpc_port},
          {"admin_http_port", e.admin_http_port}};
}

std::string NodeEndpointToJson(const NodeEndpoint& endpoint) { return DumpJson(NodeEndpointJson(endpoint)); }

Result<NodeEndpoint> NodeEndpointFromJson(std::string_view json, std::string_view where) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(std::string(where) + ": not valid JSON");
  return FromJson(j, where);
}

std::string GenerateNodeId(std::string_view host, int admin_http_port, Rng& rng) {
  char suffix[9];
  std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(rng.NextU64() & 0xffffffffu));
  return std::string(host) + ":" + std::to_string(admin_http_port) + "_" + suffix;
}

NodeRegistry::NodeRegistry(Runtime& runtime, CoordinationBackend& backend, NodeEndpoint self,
                           Duration heartbeat_interval, Duration heartbeat_ttl)
    : runtime_(runtime),
      backend_(backend),
      self_(std::move(self)),
      interval_(heartbeat_interval),
      ttl_(heartbeat_ttl),
      mu_(runtime),
      cv_(runtime) {}

NodeRegistry::~NodeRegistry() { Stop(); }

Status NodeRegistry::Start() {
  if (Status s = ValidateKey("node_id", self_.node_id); !s.ok()) return Status::InvalidConfig(s.message());
  if (interval_ <= Duration::zero() || ttl_ <= interval_) {
    return Status::InvalidConfig("node heartbeat: ttl (" + std::to_string(ToMillis(ttl_)) +
                                 " ms) must exceed the interval (" + std::to_string(ToMillis(interval_)) +
                                 " ms), which must be > 0");
  }
  {
    MutexLock lock(mu_);
    if (started_) return Status(StatusCode::kAlreadyExists, "node registry already started");
    started_ = true;
  }
  Status info = backend_.SetValue(InfoKey(self_.node_id), NodeEndpointToJson(self_));
  if (!info.ok()) spdlog::warn("node '{}': cannot publish node info yet: {}", self_.node_id, info.ToString());
  Status hb = Heartbeat();
  if (!hb.ok()) spdlog::warn("node '{}': first heartbeat failed: {}", self_.node_id, hb.ToString());
  // The schedule starts now, not whenever the new thread first runs.
  const MonoTime first = runtime_.Now() + interval_;
  thread_ = runtime_.Spawn("kvc_heartbeat", [this, published = info.ok(), first] { Loop(published, first); });
  return Status::Ok();
}

void NodeRegistry::Loop(bool info_published, MonoTime next) {
  while (true) {
    {
      MutexLock lock(mu_);
      while (!stopping_ && cv_.WaitUntil(mu_, next)) {
      }
      if (stopping_) return;
    }
    next = std::max(next + interval_, runtime_.Now());
    // Re-publish the info until it sticks (the backend may have been down at start, or restarted
    // without persistence).
    if (!info_published) info_published = backend_.SetValue(InfoKey(self_.node_id), NodeEndpointToJson(self_)).ok();
    Status s = Heartbeat();
    if (!s.ok()) {
      info_published = false;
      spdlog::warn("node '{}': heartbeat failed: {}", self_.node_id, s.ToString());
    }
  }
}

void NodeRegistry::Stop() {
  {
    MutexLock lock(mu_);
    if (!started_ || stopping_) return;
    stopping_ = true;
    cv_.NotifyAll();
  }
  thread_.Join();
  Status s = backend_.DeleteValue(HeartbeatKey(self_.node_id));
  if (!s.ok()) spdlog::warn("node '{}': could not delete its heartbeat (it expires): {}", self_.node_id, s.ToString());
}

Status NodeRegistry::Heartbeat() {
  nlohmann::json j = NodeEndpointJson(self_);
  j["heartbeat_wall_ms"] = ToMillis(runtime_.WallNow().time_since_epoch());
  return backend_.SetValueWithTtl(HeartbeatKey(self_.node_id), DumpJson(j), ttl_);
}

Result<std::vector<LiveNode>> NodeRegistry::ListLiveNodes() {
  auto values = backend_.ListValues(kNodeHeartbeatKeyPrefix);
  if (!values.ok()) return values.status();
  std::vector<LiveNode> out;
  for (const auto& kv : *values) {
    nlohmann::json j = nlohmann::json::parse(kv.value, nullptr, false);
    auto e = FromJson(j, "heartbeat '" + kv.key + "'");
    if (!e.ok()) {
      spdlog::warn("{}", e.status().message());  // one bad entry must not hide the other nodes
      continue;
    }
    LiveNode n{std::move(*e), 0};
    if (auto it = j.find("heartbeat_wall_ms"); it != j.end() && it->is_number_integer()) {
      n.heartbeat_wall_ms = it->get<int64_t>();
    }
    out.push_back(std::move(n));
  }
  return out;  // keys share a prefix and end in the node id, so key order is node-id order
}

Result<NodeEndpoint> NodeRegistry::GetNodeInfo(std::string_view node_id) {
  auto v = backend_.GetValue(InfoKey(node_id));
  if (!v.ok()) {
    if (v.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("node '" + std::string(node_id) + "' has published no endpoint");
    }
    return v.status();
  }
  return ParseInfo(*v, node_id);
}

Result<NodeEndpoint> NodeRegistry::ParseInfo(const std::string& text, std::string_view node_id) {
  constexpr size_t kMaxTexts = 64;  // a cluster's nodes and their restarts; cleared when reached
  {
    std::lock_guard<std::mutex> lock(parsed_mu_);
    if (auto it = parsed_.find(text); it != parsed_.end()) return it->second;
  }
  Result<NodeEndpoint> parsed = NodeEndpointFromJson(text, "node info of '" + std::string(node_id) + "'");
  if (!parsed.ok()) return parsed;  // errors are not kept: each names its node
  std::lock_guard<std::mutex> lock(parsed_mu_);
  if (parsed_.size() >= kMaxTexts) parsed_.clear();
  parsed_.emplace(text, *parsed);
  return parsed;
}

Result<std::optional<NodeEndpoint>> NodeRegistry::GetLeaderEndpoint(std::string_view lock_key) {
  auto holder = backend_.GetLockHolder(lock_key, kNoDeadline);
  if (!holder.ok()) return holder.status();
  if (holder->holder.empty()) return std::optional<NodeEndpoint>();
  auto info = GetNodeInfo(holder->holder);
  if (!info.ok()) return info.status();
  return std::optional<NodeEndpoint>(std::move(*info));
}

}  // namespace kvchaos::election
