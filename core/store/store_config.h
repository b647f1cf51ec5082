// PosixStoreConfig: everything a PosixStore needs, as a plain struct (embedders and the faultfs
// harness fill it in code) or read from YAML in the shape of upstream's connector config:
//
//   storage_backends: "/mnt/p0:/mnt/p1:/mnt/p2"   # access paths to the same data, in route order
//   posix_io_engine: aio                           # aio | psync
//   io_direct: true
//   timeout_ms: 3000                               # whole-transfer budget; 0 disables timeouts
//   block_size: 4MiB                               # shard_size * shards per block
//   shard_size: 4MiB
//   tensor_size: 4MiB                              # one buffer of a shard
//   concurrency: 16                                # I/O workers (psync) / queue depth (aio)
//   durable_commit: false                          # true: a block is acknowledged once it survives a power loss
//   cpu_affinity: "7"                              # optional CPU list for the ucm_health_* threads
//   max_inflight_shards: 65536                     # shards queued or in I/O; Dump/Load past it: Unavailable
//   max_pending_tasks: 65536                       # task handles not yet Waited; Dump/Load past it: Unavailable
//   store_health: {enabled: true, health_check_interval_s: 10, health_check_timeout_s: 3,
//                  health_window_size: 8, failure_threshold: 2}
//
// The keys may also sit under `ucm_connectors[i].ucm_connector_config` of a full upstream file.
// Validation (upstream's StoreHealthConfig rules plus ours) reports every problem with file, line
// and key, and nothing is applied unless all of it is valid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/config_reader.h"
#include "core/common/status.h"

namespace kvchaos::store {

enum class IoEngineKind { kAio, kPsync };

struct StoreHealthConfig {
  bool enabled = true;                  // the outer breaker only (HealthBreakerStore)
  double health_check_interval_s = 10;  // > 0
  double health_check_timeout_s = 3;   // > 0 and < interval
  int health_window_size = 8;           // 1..48
  int failure_threshold = 2;            // 1..window

  Status Validate() const;  // messages name the key (store_health.<key>)
};

struct PosixStoreConfig {
  std::vector<std::string> storage_backends;
  IoEngineKind io_engine = IoEngineKind::kPsync;
  bool io_direct = false;
  int64_t timeout_ms = 0;
  uint64_t block_size = 4ULL << 20;
  uint64_t shard_size = 4ULL << 20;
  uint64_t tensor_size = 4ULL << 20;
  int concurrency = 8;
  // false (upstream's cache semantics): a dumped block is visible at once and may be lost, or come
  // back short, after a power loss of the storage (reads then miss). true: its data is synced
  // before the rename and its directory after it (group commit), and only then acknowledged.
  bool durable_commit = false;
  std::vector<int> cpu_affinity;  // empty: do not pin the health threads
  // Bounds on what callers can pile up (1..kMaxQueueBound each). Shards of admitted tasks whose
  // I/O has not finished: a Dump or Load that would pass it is refused (Unavailable) instead of
  // queueing without limit in the engine. Handles returned and never Waited: each keeps its task
  // (and saved shard copies) alive, so past this many Dump/Load is refused until callers Wait.
  int64_t max_inflight_shards = 65536;
  int64_t max_pending_tasks = 65536;
  static constexpr int64_t kMaxQueueBound = int64_t{1} << 24;
  StoreHealthConfig health;

  // Normalises and de-duplicates the backend paths (keeping the first occurrence's position) and
  // checks every value. On error the config is left unchanged.
  Status NormalizeAndValidate();
  uint64_t shards_per_block() const { return block_size / shard_size; }
};

// A backend path as it is compared and routed: lexically normal, no trailing '/'.
std::string NormalizeBackendPath(const std::string& path);

// Reads the store keys from `section` (see the file comment); problems are recorded in `section`.
// `given_keys`, when set, receives the keys the section sets, as StoreConfigToJson names them.
void ReadStoreConfig(ConfigSection& section, PosixStoreConfig* out, std::vector<std::string>* given_keys = nullptr);
// Loads, reads and validates a YAML file (or text, named `name` in messages).
Result<PosixStoreConfig> LoadStoreConfig(const std::string& path, std::vector<std::string>* given_keys = nullptr);
Result<PosixStoreConfig> ParseStoreConfig(std::string_view text, const std::string& name,
                                          std::vector<std::string>* given_keys = nullptr);

// Every key of a config with its value, as the YAML file names them (store_health.* nested), so a
// reader sees what a file left at its default: `kvchaos store check` prints it.
nlohmann::json StoreConfigToJson(const PosixStoreConfig& config);

}  // namespace kvchaos::store
