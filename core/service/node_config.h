// NodeConfig: the settings of one metadata node, read from YAML (ha-leader-election.md section 5;
// the seed's dotted keys are nested mappings here):
//
//   kvcm:
//     coordination: {uri: "redis://127.0.0.1:6379/?db=0"}   # "" or absent: single node, memory://
//     leader_elector: {node_id: "", lease_ms: 10000, loop_interval_ms: 100,
//                      safety_margin_ms: -1, forbid_campaign_time_ms: 0}
//     service: {advertised_host: "", listen_host: "127.0.0.1", meta_http_port: 6382,
//               admin_http_port: 6492, heartbeat_interval_ms: 1000, heartbeat_ttl_ms: 5000,
//               http_worker_threads: 8}
//     meta: {indexer_uri: "memory://"}
//
// The legacy key `kvcm.distributed_lock.uri` is accepted when `kvcm.coordination.uri` is absent.
// Every problem is reported as `file:line: key: problem`; nothing is used unless all is valid.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace kvchaos::service {

struct NodeConfig {
  std::string coordination_uri;  // "" = memory:// (single node)
  std::string node_id;           // "" = generated at start: {host}:{admin_http_port}_{hex}
  int64_t lease_ms = 10000;
  int64_t loop_interval_ms = 100;
  int64_t safety_margin_ms = -1;  // -1 = the elector's default
  int64_t forbid_campaign_time_ms = 0;
  std::string advertised_host;             // "" = listen_host unless that is 0.0.0.0, then 127.0.0.1
  std::string listen_host = "127.0.0.1";
  int meta_http_port = 6382;               // 0 = any free port (tests)
  int admin_http_port = 6492;
  int64_t heartbeat_interval_ms = 1000;
  int64_t heartbeat_ttl_ms = 5000;
  int http_worker_threads = 8;             // per port; connection workers on the runtime
  std::string indexer_uri = "memory://";   // the persistent meta indexer
};

// Reads `path`. InvalidConfig lists every problem as `file:line: key: problem`.
Result<NodeConfig> LoadNodeConfig(const std::string& path);
// Same from text; `name` stands for the file name in messages.
Result<NodeConfig> ParseNodeConfig(std::string_view text, std::string name);

}  // namespace kvchaos::service
