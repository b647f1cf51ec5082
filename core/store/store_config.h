// PosixStoreConfig: everything a PosixStore needs, as a plain struct (embedders and the faultfs
// harness fill it in code) or read from YAML in the shape of upstream's connector config:
//
//   storage_backends: "/mnt/p0:/mnt/p1:/mnt/p2"   # access paths to the same data, in route order
//                                                  # (or a YAML list: ["/mnt/p0", "/mnt/p1"])
//   data_dir_shard_bytes: 3                        # upstream's layout: 0..5 hex chars of shard dir
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
//   device_id: -1                                  # upstream's accelerator id (>= -1): accepted, unused
//   posix_gc_enable: false                         # upstream's capacity GC: kvchaos has none (warns if true)
//   shard_dirs_at_setup: true                      # make all 16^W shard directories at Setup (upstream)
//
// The keys may also sit under `ucm_connectors[i].ucm_connector_config` of a full upstream file.
// storage_backends follows upstream: the paths are compared as strings (one trailing '/' aside),
// an exact repeat is dropped, and two spellings of one directory (`/a`, `/a/.`) stay two paths, so
// hash % n agrees with upstream peers given the same string; Setup warns about them.
// Validation (upstream's StoreHealthConfig rules plus ours) reports every problem with file, line
// and key, and nothing is applied unless all of it is valid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/config_reader.h"
#include "core/common/status.h"
#include "core/store/block_id.h"

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
  // Upstream's directory layout: block files in `<first W hex>/` (16^W directories made at setup),
  // or in `data/` for 0 (block_id.h). 0..kMaxShardWidth.
  int data_dir_shard_bytes = kDefaultShardWidth;
  // true (upstream's behaviour): Setup makes every shard directory on every path (16^W mkdirs;
  // EEXIST is fine), since an upstream peer checks they exist on its other paths before it starts.
  // false: the engines make a block's shard directory on first use. Never removed either way.
  bool shard_dirs_at_setup = true;
  // Upstream's device (accelerator) id, >= -1. kvchaos moves host buffers only, so it is accepted and
  // not used (a caller with device memory stages it through host buffers).
  int device_id = -1;
  // Upstream's capacity GC. kvchaos has none: blocks go only by Remove. true is accepted (an
  // upstream peer sharing the data may run it) and Setup warns that kvchaos will not.
  bool posix_gc_enable = false;

  // De-duplicates the backend paths as upstream does (the string, one trailing '/' aside; the
  // first occurrence keeps its position) and checks every value. On error the config is left
  // unchanged.
  Status NormalizeAndValidate();
  uint64_t shards_per_block() const { return block_size / shard_size; }
};

// A backend path as it is compared and routed: as given, less one trailing '/' ("/" stays "/"),
// which is upstream's rule (it compares `path` with a '/' appended when missing).
std::string NormalizeBackendPath(const std::string& path);
// One warning per pair of configured paths that name the same directory lexically ("/a" and
// "/a/."): they count as two paths (as upstream counts them), so that directory takes two shares.
std::vector<std::string> SameDirectoryWarnings(const std::vector<std::string>& backends);

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
