// NodeConfig: the settings of one metadata node, read from YAML (ha-leader-election.md section 5;
// the seed's dotted keys are nested mappings here):
//
//   kvcm:
//     coordination: {uri: "redis://127.0.0.1:6379/?db=0"}   # "" or absent: single node, memory://
//     leader_elector: {node_id: "", lease_ms: 10000, loop_interval_ms: 100,
//                      safety_margin_ms: -1, forbid_campaign_time_ms: 0}
//     service: {advertised_host: "", listen_host: "127.0.0.1", meta_http_port: 6382,
//               admin_http_port: 6492, advertised_meta_port: 0, advertised_admin_port: 0,
//               heartbeat_interval_ms: 1000, heartbeat_ttl_ms: 5000,
//               http_worker_threads: 8, health_max_silence_loops: 10, admin_token: "",
//               http_max_connections: 512, http_max_queued_requests: 64,
//               http_request_timeout_ms: 10000, http_idle_timeout_ms: 5000,
//               http_max_header_bytes: 16KiB, http_max_headers: 64, http_max_body_bytes: 16MiB,
//               http_max_keys_per_call: 16384}
//     meta: {indexer_uri: "memory://"}
//     testing: {serve_without_lease_check: false}   # test-only, see below
//
// advertised_host unset: chosen at start (advertised_host.h: the bind address if specific, else
// the host name if it resolves, else 127.0.0.1). advertised_meta_port / advertised_admin_port: the
// ports clients are told to call (behind a port forward or a proxy, e.g. real mode's client-path
// proxies); 0 = the port the node listens on.
//
// Limits of both HTTP ports (http_limits.h; each per port), so that no client can starve the
// workers or the memory of the node: requests are read by an event loop and reach one of the
// http_worker_threads only when complete. http_max_connections open connections (the next gets
// 503), http_max_queued_requests complete requests waiting for a worker (the next gets 503), a
// request within http_request_timeout_ms of its first byte (408), a kept-alive connection idle at
// most http_idle_timeout_ms, at most http_max_header_bytes of request line and headers in at most
// http_max_headers lines (431), a body of at most http_max_body_bytes (413, refused from its
// Content-Length before it is read), at most http_max_keys_per_call entries in any array of a body
// (400 naming the field and the limit). Malformed framing (a Content-Length that is not a number,
// Content-Length with Transfer-Encoding, ...) is 400, chunked bodies 411.
//
// admin_token: a shared secret (at least 16 characters) that every admin-port request must carry
// as "Authorization: Bearer <token>" (401 otherwise; `kvchaos` and the clients send the
// KVCHAOS_ADMIN_TOKEN environment variable). Empty: no authentication, and the node refuses to
// start when the admin port would listen beyond loopback (listen_host other than 127.0.0.0/8 or
// ::1, e.g. 0.0.0.0); it warns whenever the admin port listens beyond loopback.
//
// kvcm.testing.* are knobs that make a node UNSAFE on purpose, so tests can show the defences
// behind it. They are refused (InvalidConfig naming the key) unless the environment variable
// KVCHAOS_TESTING=1 is set, and a node running with one logs a warning and reports unhealthy.
//   serve_without_lease_check: the data plane skips the per-request lease check and stays up after
//     the node loses leadership (a "zombie leader"), so only the indexer's fencing-token check
//     stands between its late writes and the new leader's data.
//
// The legacy key `kvcm.distributed_lock.uri` is accepted when `kvcm.coordination.uri` is absent.
// Every problem is reported as `file:line: key: problem`; nothing is used unless all is valid.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/election/leader_elector.h"
#include "core/service/http_limits.h"

namespace kvchaos::service {

struct NodeConfig {
  std::string coordination_uri;  // "" = memory:// (single node)
  std::string node_id;           // "" = generated at start: {host}:{admin_http_port}_{hex}
  int64_t lease_ms = 10000;
  int64_t loop_interval_ms = 100;
  int64_t safety_margin_ms = -1;  // -1 = the elector's default
  int64_t forbid_campaign_time_ms = 0;
  std::string advertised_host;             // "" = chosen at start (advertised_host.h)
  std::string listen_host = "127.0.0.1";
  int meta_http_port = 6382;               // 0 = any free port (tests)
  int admin_http_port = 6492;
  int advertised_meta_port = 0;            // 0 = meta_http_port as bound
  int advertised_admin_port = 0;           // 0 = admin_http_port as bound
  int64_t heartbeat_interval_ms = 1000;
  int64_t heartbeat_ttl_ms = 5000;
  int http_worker_threads = 8;             // per port; request workers on the runtime
  HttpLimits http;                         // kvcm.service.http_* (see above)
  std::string admin_token;                 // "" = none (then the admin port must stay on loopback)
  // CheckHealth: the backend must have answered, and the elector's threads ticked, within this
  // many loop intervals.
  int health_max_silence_loops = 10;
  std::string indexer_uri = "memory://";   // the persistent meta indexer

  struct Testing {
    bool serve_without_lease_check = false;
    // Bugs the simulator plants in the elector (LeaderElectorOptions::TestingKnobs); set only in
    // code, never from a file.
    election::LeaderElectorOptions::TestingKnobs elector;
    // A bug the simulator plants in recovery: a new leader serves without fencing its term (no
    // NewestFencingToken read, no RaiseTokenAbove, no RaiseFence). Code only.
    bool skip_recovery_fence = false;
  };
  Testing testing;  // kvcm.testing.*: refused unless KVCHAOS_TESTING=1
};

// The environment switch that admits kvcm.testing.* keys.
inline constexpr const char* kTestingEnvVar = "KVCHAOS_TESTING";
// The shortest admin token accepted.
inline constexpr size_t kMinAdminTokenBytes = 16;

// Reads `path`. InvalidConfig lists every problem as `file:line: key: problem`.
Result<NodeConfig> LoadNodeConfig(const std::string& path);
// Same from text; `name` stands for the file name in messages.
Result<NodeConfig> ParseNodeConfig(std::string_view text, std::string name);

}  // namespace kvchaos::service
