// CacheClientConfig: everything a CacheClient (cache_client.h) is built from, as one YAML file —
// the store's keys (core/store/store.example.yaml) and a `meta` section saying where the meta
// service is. core/client/client.example.yaml is a commented example.
//
//   storage_backends: "/mnt/p0:/mnt/p1"   # ... and every other store key, at the top level
//   block_size: 4MiB
//   meta:
//     storage: nfs1                       # the storage's global_unique_name in meta
//     # Either an in-process meta service over an indexer (this process is its only writer) ...
//     indexer: local:///var/lib/kvchaos/meta.json   # memory://, local:///FILE, redis://HOST:PORT/?db=N
//     # ... or the nodes of a cluster: any of their meta or admin ports; the leader is discovered.
//     nodes: ["10.0.0.1:6382", "10.0.0.2:6382", "10.0.0.3:6382"]
//     request_timeout_ms: 2000            # nodes only: one call to one node
//     max_attempts: 10                    # nodes only: tries per call across leader changes
//     register: {checksum: crc64_full}    # optional: register the storage when the client opens
//                                         # (crc64_full | crc32_xor_int64 | off); a no-op when the
//                                         # same storage is registered, AlreadyExists when it differs
//     iov_size: 64KiB                     # optional, `kvchaos integrity verify` only: the IOV size
//                                         # of records written before IOV layouts were stored
//
// Block and shard sizes are the store's (block_size, shard_size): nothing else repeats them.
// Every problem is reported as `file:line: key: problem`, all of them at once, and nothing is
// used unless all is valid.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/meta/storage_config.h"
#include "core/store/store_config.h"

namespace kvchaos::client {

struct CacheClientConfig {
  store::PosixStoreConfig store;
  std::string storage;  // meta.storage
  // Exactly one of these two: where meta is.
  std::string indexer;             // meta.indexer: an in-process meta service over this indexer
  std::vector<std::string> nodes;  // meta.nodes: "host:port" of cluster nodes (leader discovery)
  int64_t request_timeout_ms = 2000;
  int max_attempts = 10;
  // meta.register: the storage to register when the client opens (named `storage`).
  std::optional<meta::StorageConfig> register_storage;
  uint64_t iov_size = 0;  // meta.iov_size; 0: one IOV spanning the block

  // The cross-field rules (one of indexer/nodes, endpoints well formed, the store's own checks);
  // for configs filled in code. Loading runs them too.
  Status Validate() const;
};

// Reads and validates a YAML file (or text, named `name` in messages).
Result<CacheClientConfig> LoadCacheClientConfig(const std::string& path);
Result<CacheClientConfig> ParseCacheClientConfig(std::string_view text, const std::string& name);

}  // namespace kvchaos::client
