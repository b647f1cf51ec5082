// DataWorkload: the data-plane workload of a run, in both modes — the simulator's world runs it on
// virtual time, real mode (harness/real/workload.h) on the operating system; it needs only a
// kvchaos::Runtime and the production TransferClient it drives. `clients` threads issue Save and
// Load at the given rates (per second, over all threads) on a key space:
//
//   - every Save writes a new version of a key, stored under the meta key "k<key>.v<version>",
//     with bytes that are a pure function of (seed, key, version); an acknowledged Save adds
//     (key, version) to the acknowledged set;
//   - every Load reads an acknowledged (key, version) picked from the seed's stream and checks
//     every byte: ChecksumMismatch is detected corruption (fine), OK with wrong bytes is
//     "corrupt returned as good" (a violation);
//   - errors are counted by status code;
//   - VerifyAll() reads back every acknowledged block at the end.
// A power loss of the storage (LosePower) takes down every Save in flight with it: a real power
// loss would have killed the process too, so such a Save has no outcome, whatever it returned
// (its rename may be lost after it happened, its fsync may succeed over dropped pages); it is
// counted apart and never joins the acknowledged set.
// Ops are paced on the runtime's clock; a thread that falls more than a second behind (a call stuck
// in a failover) drops the backlog instead of bursting.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/client/transfer_client.h"
#include "core/meta/storage_config.h"
#include "core/store/store_config.h"
#include "core/common/rng.h"
#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos::sim {

struct DataWorkloadOptions {
  uint64_t seed = 1;
  double save_rate_per_s = 0;
  double load_rate_per_s = 0;
  uint64_t block_size = 64 * 1024;
  int64_t key_space = 1024;
  int clients = 1;
  // VerifyAll's retries of a transient answer (a failover still settling), and the wait between.
  int readback_retries = 3;
  Duration readback_retry_wait = std::chrono::milliseconds(500);
};

struct DataWorkloadCounts {
  int64_t saves = 0;  // acknowledged
  int64_t loads = 0;  // returned the right bytes
  int64_t corrupt_detected = 0;
  int64_t corrupt_returned = 0;
  int64_t acked_blocks = 0;
  int64_t acked_unreadable = 0;
  int64_t misrouted_reported = 0;  // blocks whose Load said InlineHeaderInvalid: another key's block
  int64_t lost_dropped = 0;  // blocks the store confirmed lost and meta dropped (LoadResult::lost)
  int64_t saves_cut_by_power_loss = 0;  // in flight at a power loss: no outcome, not acknowledged
  std::map<std::string, int64_t> errors;  // status code name -> count (saves, loads and readback)
  std::vector<std::string> unreadable_examples;  // first few "k3.v2: NotFound: ..."
};

class DataWorkload {
 public:
  DataWorkload(Runtime& runtime, client::TransferClient& transfer, DataWorkloadOptions options);
  ~DataWorkload();  // Stop()
  DataWorkload(const DataWorkload&) = delete;
  DataWorkload& operator=(const DataWorkload&) = delete;

  // Starts the client threads (kvc_load<i>) when a rate is set.
  void Start();
  // Stops the client threads (waits for their current call).
  void Stop();
  // Reads back every acknowledged block; call after Stop.
  void VerifyAll();
  DataWorkloadCounts Counts() const;
  // Runs `crash` (the storage's power loss); every Save in flight at any moment of it is cut.
  void LosePower(const std::function<void()>& crash);

 private:
  struct Acked {
    int64_t key;
    int64_t version;
  };
  void Client(int index);
  void SaveOne(Rng& rng);
  void LoadOne(Rng& rng, std::vector<std::byte>& buffer);
  // Loads (key, version) into `buffer` and checks its bytes; returns the load's status (Internal
  // for wrong bytes). Each client reuses one buffer for all its loads, as a serving engine reuses
  // its KV memory: a store that let a late read touch a buffer it already gave back would damage
  // the next load there.
  Status LoadAndCheck(const Acked& block, bool readback, std::vector<std::byte>& buffer);
  void Fill(int64_t key, int64_t version, std::vector<std::byte>& out) const;

  Runtime& runtime_;
  client::TransferClient& transfer_;
  const DataWorkloadOptions options_;
  std::atomic<bool> stop_{false};
  // Raised before and after every power loss: a Save that sees it change was in flight then.
  std::atomic<uint64_t> power_epoch_{0};
  std::vector<Thread> threads_;
  std::vector<std::vector<std::byte>> load_buffers_;  // one per client, and VerifyAll's last

  mutable Mutex mu_;
  std::vector<Acked> acked_ GUARDED_BY(mu_);
  std::map<int64_t, int64_t> next_version_ GUARDED_BY(mu_);
  DataWorkloadCounts counts_ GUARDED_BY(mu_);
};

// The meta key of a (key, version) of the workload: "k<key>.v<version>".
std::string DataWorkloadKey(int64_t key, int64_t version);

// The storage a run registers (posix, meta checksums on, crc64_full), and the store both modes run
// the workload's blocks on: one shard per block, 4 attempts in flight, each attempt bounded (a hung
// path costs one attempt, not the run), a short health window so excluded paths come back soon.
// `inline_header`: its blocks carry the inline header (docs/inline-header.md, the latest version),
// so a Load that gets another key's block reports a misrouted read.
meta::StorageConfig DataWorkloadStorage(const std::string& name, bool inline_header = false);
// The workload's block files inside a store path (`<3 hex>/<32 hex>`, store/block_id.h): the
// default source of a misdirected read, leaving out temp (".tmp") and probe files.
// (Two literals: three question marks before a slash would read as a trigraph.)
inline constexpr const char* kBlockFileGlob = "???" "/????????????????????????????????";
store::PosixStoreConfig DataWorkloadStoreConfig(std::vector<std::string> backends, uint64_t block_size,
                                                store::IoEngineKind engine, bool durable_commit);

}  // namespace kvchaos::sim
