// Leader discovery and retried calls to the leading node (see leader_discovery.h).
#include "core/client/leader_discovery.h"

#include <atomic>

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "core/common/json_text.h"
#include "core/service/wire_format.h"

namespace kvchaos::client {

Status ParseHostPort(std::string_view endpoint, std::string* host, int* port) {
  size_t colon = endpoint.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Status::InvalidArgument("endpoint '" + std::string(endpoint) + "': expected host:port");
  }
  std::string_view p = endpoint.substr(colon + 1);
  int value = 0;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (ec != std::errc() || end != p.data() + p.size() || value <= 0 || value > 65535) {
    return Status::InvalidArgument("endpoint '" + std::string(endpoint) + "': port must be 1..65535");
  }
  *host = std::string(endpoint.substr(0, colon));
  *port = value;
  return Status::Ok();
}

namespace {

// httplib names its errors in one word ("Connection"); say what happened.
std::string DescribeHttpError(httplib::Error error, int64_t timeout_ms) {
  switch (error) {
    case httplib::Error::Connection:
      return "cannot connect (refused: nothing listens on that port, or the host is unreachable)";
    case httplib::Error::ConnectionTimeout:
      return "no connection within " + std::to_string(timeout_ms) + " ms";
    case httplib::Error::Read:
      return "no answer within " + std::to_string(timeout_ms) + " ms, or the connection broke while reading it";
    case httplib::Error::Write:
      return "the connection broke while sending the request";
    default:
      return httplib::to_string(error);
  }
}

}  // namespace

Result<nlohmann::json> PostJson(const std::string& endpoint, std::string_view call, const nlohmann::json& body,
                                int64_t timeout_ms) {
  std::string host;
  int port = 0;
  KVCHAOS_RETURN_IF_ERROR(ParseHostPort(endpoint, &host, &port));
  httplib::Client client(host, port);
  auto timeout = std::chrono::milliseconds(timeout_ms);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  // The admin port of a node with kvcm.service.admin_token wants it (other ports ignore it).
  if (const char* token = std::getenv(kAdminTokenEnvVar); token != nullptr && *token != '\0') {
    client.set_bearer_token_auth(token);
  }
  std::string path = std::string(service::wire::kApiPrefix) + std::string(call);
  auto res = client.Post(path.c_str(), DumpJson(body), "application/json");
  if (!res) {
    return Status::Unavailable("node " + endpoint + " unreachable: " + DescribeHttpError(res.error(), timeout_ms));
  }
  nlohmann::json answer = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded() || !answer.is_object()) {
    return Status::Internal("node " + endpoint + " answered HTTP " + std::to_string(res->status) + " without JSON");
  }
  return answer;
}

namespace {

class HttpTransport final : public NodeTransport {
 public:
  Result<nlohmann::json> Call(const std::string& endpoint, std::string_view call, const nlohmann::json& body,
                              int64_t timeout_ms) override {
    return PostJson(endpoint, call, body, timeout_ms);
  }
};

uint64_t DefaultBackoffSeed(Runtime& runtime) {
  // Distinct per process, per start and per instance (two clients made in one microsecond must
  // differ too: their StartWriteCache request ids derive from it); only used when the caller
  // gives no seed.
  static std::atomic<uint64_t> instances{0};
  return Mix64(static_cast<uint64_t>(::getpid())) ^
         Mix64(static_cast<uint64_t>(runtime.WallNow().time_since_epoch().count())) ^
         Mix64(Mix64(instances.fetch_add(1) + 1));
}

}  // namespace

NodeTransport& NodeTransport::Http() {
  static HttpTransport transport;
  return transport;
}

int64_t BackoffCapMs(const LeaderDiscoveryOptions& options, int retry) {
  const int64_t max_ms = std::max<int64_t>(0, options.max_backoff_ms);
  int64_t cap = std::max<int64_t>(0, options.initial_backoff_ms);
  for (int i = 1; i < retry && cap < max_ms; ++i) cap = cap > max_ms / 2 ? max_ms : cap * 2;
  return std::min(cap, max_ms);
}

LeaderDiscovery::LeaderDiscovery(Runtime& runtime, LeaderDiscoveryOptions options, NodeTransport& transport)
    : runtime_(runtime),
      transport_(transport),
      options_(std::move(options)),
      backoff_seed_(options_.backoff_seed.value_or(DefaultBackoffSeed(runtime))),
      mu_(runtime),
      jitter_(Rng(backoff_seed_).Split("leader_discovery.backoff")) {}

Duration LeaderDiscovery::NextBackoff(int retry) {
  const int64_t cap = BackoffCapMs(options_, retry);
  MutexLock lock(mu_);
  return Millis(jitter_.UniformInt(0, cap));
}

std::optional<std::string> LeaderDiscovery::MetaEndpointOf(const nlohmann::json& ep) {
  if (!ep.is_object() || !ep.contains("host") || !ep["host"].is_string() || !ep.contains("meta_http_port") ||
      !ep["meta_http_port"].is_number_integer()) {
    return std::nullopt;
  }
  return ep["host"].get<std::string>() + ":" + std::to_string(ep["meta_http_port"].get<int>());
}

Result<std::string> LeaderDiscovery::Discover() {
  if (options_.bootstrap.empty()) return Status::InvalidArgument("leader discovery: no bootstrap endpoints");
  std::string last_error = "no node named a leader";
  for (const std::string& endpoint : options_.bootstrap) {
    auto info = transport_.Call(endpoint, "GetClusterInfo", nlohmann::json::object(), options_.request_timeout_ms);
    if (!info.ok()) {
      last_error = info.status().message();
      continue;
    }
    if (Status s = service::wire::StatusFromAnswer(*info); !s.ok()) {
      last_error = endpoint + ": " + s.ToString();
      continue;
    }
    if (auto leader = MetaEndpointOf(info->value("leader_endpoint", nlohmann::json()))) {
      MutexLock lock(mu_);
      leader_ = *leader;
      ++discoveries_;
      return *leader;
    }
  }
  return Status::Unavailable("leader discovery: " + last_error);
}

Result<std::string> LeaderDiscovery::Leader() {
  {
    MutexLock lock(mu_);
    if (!leader_.empty()) return leader_;
  }
  return Discover();
}

void LeaderDiscovery::Invalidate() {
  MutexLock lock(mu_);
  leader_.clear();
}

int LeaderDiscovery::discoveries() const {
  MutexLock lock(mu_);
  return discoveries_;
}

Result<nlohmann::json> LeaderDiscovery::CallLeader(std::string_view call, const nlohmann::json& body) {
  if (options_.initial_backoff_ms < 0 || options_.max_backoff_ms < options_.initial_backoff_ms) {
    return Status::InvalidArgument("leader discovery: need 0 <= initial_backoff_ms <= max_backoff_ms, got " +
                                   std::to_string(options_.initial_backoff_ms) + " and " +
                                   std::to_string(options_.max_backoff_ms));
  }
  Status last = Status::Unavailable("no attempt made");
  for (int attempt = 0; attempt < std::max(1, options_.max_attempts); ++attempt) {
    if (attempt > 0) runtime_.SleepFor(NextBackoff(attempt));
    auto leader = Leader();
    if (!leader.ok()) {
      if (leader.status().code() == StatusCode::kInvalidArgument) return leader.status();
      last = leader.status();
      continue;
    }
    auto answer = transport_.Call(*leader, call, body, options_.request_timeout_ms);
    if (!answer.ok()) {
      // Unreachable leader: it may have died; ask the cluster again.
      last = answer.status();
      Invalidate();
      continue;
    }
    Status s = service::wire::StatusFromAnswer(*answer);
    if (s.code() == StatusCode::kNotLeader) {
      last = s;
      auto hint = MetaEndpointOf(answer->value("leader_endpoint", nlohmann::json()));
      MutexLock lock(mu_);
      // A hint naming the node we just asked is stale (its own term ended); rediscover instead.
      leader_ = hint && *hint != *leader ? *hint : std::string();
      continue;
    }
    if (s.code() == StatusCode::kConflict) {
      // A late write changed a record between the leader's read and its conditional write: the
      // call changed nothing, and asking again reads the record anew.
      last = s;
      continue;
    }
    if (!s.ok()) return s;
    return std::move(*answer);
  }
  return Status(last.code() == StatusCode::kNotLeader ? StatusCode::kNotLeader : StatusCode::kUnavailable,
                std::string(call) + ": no leader answered after " + std::to_string(options_.max_attempts) +
                    " attempts; last: " + last.message());
}

}  // namespace kvchaos::client
