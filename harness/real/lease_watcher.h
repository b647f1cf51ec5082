// LeaseWatcher: real mode's view of the leader lock in the coordination backend itself (not
// through the nodes' proxies). A thread asks the backend for the lock's holder, token and time
// left every few milliseconds and keeps, per holding (node, token), the latest time its lease
// ends: the answer's arrival plus the time left, an upper bound on the true end. The lease check
// (sim/failover_checks.h CheckLeaseStops) compares each term's last accepted write with it.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/common/runtime.h"
#include "core/election/coordination_backend.h"
#include "harness/real/node_cluster.h"
#include "sim/failover_checks.h"

namespace kvchaos::harness::real {

class LeaseWatcher {
 public:
  // Times are ms since `start`, as the observer's.
  LeaseWatcher(std::unique_ptr<election::CoordinationBackend> backend, const NodeCluster& cluster, MonoTime start);
  ~LeaseWatcher();  // Stop()

  void Start();
  void Stop();

  // Per holding seen, where its lease ends (ns since start, the observer's timeline).
  std::vector<sim::TermLeaseEnd> LeaseEnds() const;
  int64_t answers() const { return answers_; }

 private:
  void Loop();

  std::unique_ptr<election::CoordinationBackend> backend_;
  const NodeCluster& cluster_;
  const MonoTime start_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> answers_{0};
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<std::pair<int, uint64_t>, int64_t> ends_ns_;  // (node, token) -> lease end
};

}  // namespace kvchaos::harness::real
