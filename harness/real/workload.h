// Workload: the data-plane client of a real-mode run. It registers the run's storage with the
// leader, sets up a PosixStore whose backends are the run's access paths (faultfs mount points
// where the scenario says so) and a TransferClient over an HTTP MetaClient that discovers the leader
// among all nodes, then drives them with the workload the simulator runs too (sim/data_workload.h:
// Saves and Loads at the scenario's rates, every byte checked, every acknowledged block read back).
// Every meta call the TransferClient makes is recorded in a history (sim/history.h) on the
// monotonic clock, as the simulator records it on true time, for the same checks.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/client/http_meta_client.h"
#include "core/client/transfer_client.h"
#include "core/common/status.h"
#include "core/common/thread_util.h"
#include "core/store/posix_store.h"
#include "harness/scenario.h"
#include "sim/data_workload.h"
#include "sim/history.h"
#include "sim/recording_meta_client.h"

namespace kvchaos::harness::real {

// The storage name the runner registers with the nodes.
inline constexpr const char* kStorageName = "kvchaos-run";

// What the workload saw, and the availability changes of the store's backends it ran on.
struct WorkloadCounts : sim::DataWorkloadCounts {
  int64_t health_transitions = 0;
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
  // Runs `crash`, the storage's power loss; Saves in flight during it have no outcome
  // (sim::DataWorkload::LosePower).
  void LosePower(const std::function<void()>& crash);
  // The meta calls recorded so far, by invoke time.
  std::vector<sim::HistoryRecord> History() const { return history_.Records(); }

 private:
  const Scenario& scenario_;
  const uint64_t seed_;
  std::vector<std::string> backends_;
  client::HttpMetaClient meta_;
  // Stamped in ns since the workload was made, so a history reads like the simulator's.
  sim::HistoryRecorder history_{Runtime::Real(), [start = Runtime::Real().Now()] {
                                  return std::chrono::duration_cast<std::chrono::nanoseconds>(Runtime::Real().Now() - start).count();
                                }};
  sim::RecordingMetaClient recording_{meta_, history_, [] { return CurrentThreadName(); }};  // what the TransferClient calls
  store::PosixStore store_;
  std::unique_ptr<client::TransferClient> transfer_;
  std::unique_ptr<sim::DataWorkload> load_;
};

}  // namespace kvchaos::harness::real
