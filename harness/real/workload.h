// Workload: the data-plane client of a real-mode run. A TransferClient over a PosixStore whose
// backends are the run's access paths (faultfs mount points where the scenario says so) and an
// HTTP MetaClient that discovers the leader among all nodes. `clients` threads issue Save and
// Load at the scenario's rates (per second, over all threads) on its key space:
//
//   - every Save writes a new version of a key, stored under the meta key "k<key>.v<version>",
//     with bytes that are a pure function of (seed, key, version); an acknowledged Save adds
//     (key, version) to the acknowledged set;
//   - every Load reads an acknowledged (key, version) picked from the seed's stream and checks
//     every byte: ChecksumMismatch is detected corruption (fine), OK with wrong bytes is
//     "corrupt returned as good" (a violation);
//   - errors are counted by status code;
//   - VerifyAll() reads back every acknowledged block at the end.
// Ops are paced on true time; a thread that falls more than a second behind (a call stuck in a
// failover) drops the backlog instead of bursting.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/client/http_meta_client.h"
#include "core/client/transfer_client.h"
#include "core/common/rng.h"
#include "core/common/status.h"
#include "core/store/posix_store.h"
#include "harness/scenario.h"

namespace kvchaos::harness::real {

// The storage name the runner registers with the nodes.
inline constexpr const char* kStorageName = "kvchaos-run";

struct WorkloadCounts {
  int64_t saves = 0;  // acknowledged
  int64_t loads = 0;  // returned the right bytes
  int64_t corrupt_detected = 0;
  int64_t corrupt_returned = 0;
  int64_t acked_blocks = 0;
  int64_t acked_unreadable = 0;
  std::map<std::string, int64_t> errors;  // status code name -> count (saves, loads and readback)
  int64_t health_transitions = 0;          // availability changes of the store's backends
  std::vector<std::string> unreadable_examples;  // first few "k3.v2: NotFound: ..."
};

class Workload {
 public:
  // `backends`: the store's access paths; `bootstrap`: admin endpoints of every node.
  Workload(const Scenario& scenario, uint64_t seed, std::vector<std::string> backends,
           std::vector<std::string> bootstrap);
  ~Workload();  // Stop()

  // Registers the storage with the leader (waiting up to `timeout` for one) and sets up the store
  // and the TransferClient.
  Status Setup(Duration timeout);
  void Start();
  // Stops the client threads (waits for their current call).
  void Stop();
  // Reads back every acknowledged block; call after Stop.
  void VerifyAll();
  WorkloadCounts Counts() const;

 private:
  struct Acked {
    int64_t key;
    int64_t version;
  };
  void Client(int index);
  void SaveOne(Rng& rng);
  void LoadOne(Rng& rng);
  // Loads (key, version) and checks its bytes; returns the load's status (Internal for wrong bytes).
  Status LoadAndCheck(const Acked& block, bool readback);
  void Fill(int64_t key, int64_t version, std::vector<std::byte>& out) const;
  void CountError(const Status& s);

  const Scenario& scenario_;
  const uint64_t seed_;
  std::vector<std::string> backends_;
  client::HttpMetaClient meta_;
  store::PosixStore store_;
  std::unique_ptr<client::TransferClient> transfer_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;

  mutable std::mutex mu_;
  std::vector<Acked> acked_;
  std::map<int64_t, int64_t> next_version_;
  WorkloadCounts counts_;
};

}  // namespace kvchaos::harness::real
