// LeaderDiscovery: finds the leading metadata node and calls it over a NodeTransport (HTTP/JSON,
// or the simulator's network).
//
// Bootstrap endpoints ("host:port", the meta or admin HTTP port of any node) are asked
// GetClusterInfo until one names a leader; calls then go to the leader's meta port. A NotLeader
// answer (which carries the new leader's endpoint when known) or a connection failure makes the
// client rediscover and retry, with exponential backoff bounded by max_backoff_ms and at most
// max_attempts tries, waiting through kvchaos::Runtime. A Conflict answer (a conditional index
// write found its record changed by a late write; nothing changed) is asked again of the same
// leader. Only these are retried: any other answer (including 400) goes back to the caller as is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/rng.h"
#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/client/node_transport.h"

namespace kvchaos::client {

struct LeaderDiscoveryOptions {
  std::vector<std::string> bootstrap;  // "host:port"; at least one
  int max_attempts = 10;
  int64_t initial_backoff_ms = 20;
  int64_t max_backoff_ms = 1000;
  int64_t request_timeout_ms = 2000;
  // Seed of the retry jitter. nullopt: from the process id and the wall clock, so clients on one
  // host differ; set it (from the caller's config or run seed) to make retries reproducible.
  std::optional<uint64_t> backoff_seed;
};

// The largest wait before retry `retry` (1 = the first retry):
// min(max_backoff_ms, initial_backoff_ms × 2^(retry-1)); never overflows.
int64_t BackoffCapMs(const LeaderDiscoveryOptions& options, int retry);

// "host:port" → host and port; InvalidArgument naming the endpoint otherwise.
Status ParseHostPort(std::string_view endpoint, std::string* host, int* port);

// The environment variable whose value PostJson sends as the admin token ("Authorization: Bearer
// <value>"), for nodes with kvcm.service.admin_token.
inline constexpr const char* kAdminTokenEnvVar = "KVCHAOS_ADMIN_TOKEN";

// One HTTP POST of a JSON body to http://endpoint/api/<call>, with the admin token of
// KVCHAOS_ADMIN_TOKEN when it is set. Unavailable when the node cannot be reached; otherwise the
// answer's JSON (whatever its code).
Result<nlohmann::json> PostJson(const std::string& endpoint, std::string_view call, const nlohmann::json& body,
                                int64_t timeout_ms);

class LeaderDiscovery {
 public:
  // `runtime` and `transport` must outlive this object; options are checked by the first call.
  LeaderDiscovery(Runtime& runtime, LeaderDiscoveryOptions options, NodeTransport& transport = NodeTransport::Http());

  // The leader's meta endpoint, asking the bootstrap endpoints when none is known.
  Result<std::string> Leader();
  // Forgets the known leader (the next call rediscovers).
  void Invalidate();
  // Calls `call` on the leader, rediscovering and retrying as described above. Returns the
  // answer of an OK call; the answer's Status otherwise.
  Result<nlohmann::json> CallLeader(std::string_view call, const nlohmann::json& body);

  // How many times a leader was (re)discovered; for tests and logs.
  int discoveries() const;
  // The seed the retry jitter uses (the configured one or the derived default).
  uint64_t backoff_seed() const { return backoff_seed_; }

 private:
  Result<std::string> Discover();
  static std::optional<std::string> MetaEndpointOf(const nlohmann::json& node_endpoint);

  // A full-jitter wait for retry `retry`.
  Duration NextBackoff(int retry);

  Runtime& runtime_;
  NodeTransport& transport_;
  const LeaderDiscoveryOptions options_;
  const uint64_t backoff_seed_;
  mutable Mutex mu_;
  Rng jitter_ GUARDED_BY(mu_);
  std::string leader_ GUARDED_BY(mu_);
  int discoveries_ GUARDED_BY(mu_) = 0;
};

}  // namespace kvchaos::client
