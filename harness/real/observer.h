// Observer: the real-mode runner's view of leadership. A thread polls GetManagerClusterInfo on
// every node that is up (never on a paused or dead one: it would only wait out a timeout) every
// ~20 ms, and sends probe writes (StartWriteCache of one reserved key, a fenced indexer write) to
// the nodes that claim to lead, and to every node every 5th round. From that it records:
//   - belief spans: a node answering is_leader with one fencing token (LeadershipSpan acting=false)
//     and lock acquisitions (the first poll showing a node leading with a new token);
//   - acting spans: consecutive probe writes a node accepted with one token (acting=true);
//   - stale writes: a probe write acknowledged under a token (the one its session names) below
//     that of a write acknowledged before it (accepted, a violation: FenceOrderCheck), and
//     StaleFencingToken answers (rejected: the fence working);
//   - token regressions: a newly acquired token not above every token seen before.
// Failover events are derived at the end (BuildFailovers) from the acting spans and the faults.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/common/runtime.h"
#include "harness/real/node_cluster.h"
#include "harness/run_result.h"
#include "harness/scenario.h"
#include "sim/failover_checks.h"

namespace kvchaos::harness::real {

// The reserved key of probe writes (the workload never uses it).
inline constexpr const char* kProbeKey = "__kvchaos_probe";

// The fence's promise, as the observer checks it: once a write under token T is acknowledged, no
// write under a lower token is acknowledged after it. The observer sends its probes one at a time,
// so every acknowledgement it recorded came before the next probe was sent: each new one is judged
// against the newest token acknowledged so far. The token is the one the write's session was fenced
// under, not one polled beside it (a node that starts leading between the poll and the probe
// reported its old term).
class FenceOrderCheck {
 public:
  // Records a write acknowledged under `token`; true if it is stale.
  bool Acknowledged(uint64_t token) {
    const bool stale = token < newest_;
    newest_ = std::max(newest_, token);
    return stale;
  }

 private:
  uint64_t newest_ = 0;
};

struct ActingSpan {
  int node = 0;
  uint64_t token = 0;
  double start_ms = 0;  // first accepted probe
  double end_ms = 0;    // last accepted probe (its answer)
  double last_sent_ms = 0;  // when that probe was sent: the node accepted it no earlier
};

struct Acquisition {
  double at_ms = 0;  // first poll showing it
  int node = 0;
  uint64_t token = 0;
};

// A fault as the timeline applied it, for naming failovers after their cause (one per node a
// fault hit).
struct FaultMark {
  std::string fault_class;
  double start_ms = 0;
  std::optional<double> end_ms;
  int node = -1;                // the node it hit; -1 for coordination and store faults
  bool stops_node = false;      // crash or pause: the node stopped acting at start_ms
  sim::FaultScope scope = sim::FaultScope::kNodeProcess;
};

class Observer {
 public:
  // Probes write to `storage`; times are ms since `start`.
  Observer(NodeCluster& cluster, std::string storage, MonoTime start);
  ~Observer();  // Stop()

  void Start();
  void Stop();

  // The node whose last poll said it leads (and that is up), or -1.
  int CurrentLeader() const;
  // The first time at or after `since_ms` that some node accepted a probe write; nullopt if none.
  std::optional<double> FirstServingSince(double since_ms) const;

  // Snapshots (call after Stop, or any time for a consistent copy).
  std::vector<ActingSpan> ActingSpans() const;
  std::vector<LeadershipSpan> BeliefSpans() const;
  std::vector<Acquisition> Acquisitions() const;
  int64_t stale_accepted() const;
  int64_t stale_rejected() const;
  int64_t token_regressions() const;
  int64_t polls() const;

 private:
  struct NodeView {
    std::optional<LeadershipSpan> belief;  // open belief span
    uint64_t belief_token = 0;
    std::optional<ActingSpan> acting;      // open acting span
    std::map<uint64_t, double> acquired_ms;  // token -> first seen leading with it
  };
  void Loop();
  void Round(int round);
  void CloseBelief(int i);
  void CloseActing(int i);
  double NowMs() const;

  NodeCluster& cluster_;
  const std::string storage_;
  const MonoTime start_;
  std::atomic<bool> stop_{false};
  std::thread thread_;

  mutable std::mutex mu_;
  std::vector<NodeView> views_;
  std::vector<ActingSpan> acting_;
  std::vector<LeadershipSpan> beliefs_;
  std::vector<Acquisition> acquisitions_;
  uint64_t max_token_ = 0;
  FenceOrderCheck fence_order_;
  int current_leader_ = -1;
  int64_t stale_accepted_ = 0;
  int64_t stale_rejected_ = 0;
  int64_t token_regressions_ = 0;
  int64_t polls_ = 0;
};

// Failover events from what the observer saw, judged by the checks both modes share
// (sim/failover_checks.h: cause, timing, "unnecessary", dual acting), with the observer's poll
// period as the lag of its sightings. Counts the overlaps of acting spans of different nodes (dual
// acting) into `windows` and `overlap_ms`.
std::vector<FailoverEvent> BuildFailovers(const std::vector<ActingSpan>& spans,
                                          const std::vector<Acquisition>& acquisitions,
                                          const std::vector<FaultMark>& faults, const sim::FailoverCheckOptions& options,
                                          int64_t* windows, double* overlap_ms);
// The lease check of the terms the observer saw (each term's last accepted probe, as sent)
// against the lease ends the watcher saw; times on the observer's timeline.
sim::LeaseStops CheckRealLeaseStops(const std::vector<ActingSpan>& spans, const std::vector<sim::TermLeaseEnd>& lease_ends,
                                    const Topology& topology);
// The options of real mode's checks for a topology: its lease and the elector's default margin,
// and three poll periods of observation lag.
sim::FailoverCheckOptions RealFailoverCheckOptions(const Topology& topology);

}  // namespace kvchaos::harness::real
