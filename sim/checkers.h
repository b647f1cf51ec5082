// Checkers of a simulated run: they read what the world recorded (acting intervals measured at
// the data plane, believing intervals from the elector's callbacks, lock grants seen by the
// backend, the faults injected) and derive the safety and liveness verdicts and the failover
// timeline. Pure functions of the records, so they are unit-tested on hand-made records.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/failover_checks.h"
#include "sim/fault_schedule.h"
#include "sim/sim_redis.h"
#include "sim/world.h"

namespace kvchaos::sim {

// A node's term as seen from outside: [start, end] in true time.
struct Interval {
  int node = -1;
  uint64_t token = 0;
  TrueNs start = 0;
  TrueNs last_true = 0;       // acting: last moment IsLeader() was seen true
  TrueNs deadline_true = -1;  // acting: lease deadline on the true timeline (-1: none)
  TrueNs end = -1;
};

struct FaultRecord {
  TrueNs start = 0;
  TrueNs end = 0;
  FaultKind kind = FaultKind::kCrash;
  int node = -1;
  int variant = 0;
  PartitionPeers peers = PartitionPeers::kCoordination;  // kPartition
  int member = -1;  // one etcd member (FaultAction::member); -1: none or every one
};

struct Records {
  int nodes = 0;
  TrueNs end_ns = 0;
  std::vector<Interval> acting;
  std::vector<Interval> believing;
  std::vector<GrantRecord> grants;
  std::map<LeaseEnd, TrueNs> lease_ends;  // the backend's ground truth per holding
  std::vector<FaultRecord> faults;
  uint64_t local_writes_accepted = 0;
};

struct CheckerOptions {
  int64_t lease_ns = 0;
  TrueNs quiet_start_ns = 0;
  int64_t liveness_bound_ns = 0;
  int64_t safety_margin_ns = 0;  // the elector's: an outage shorter than lease - margin must not move leadership
  int64_t loop_ns = 0;           // a term must stop acting this long before its lease ends in the backend
};

// Overlaps between intervals of different nodes: number of overlapping pairs and total time.
void CountOverlaps(const std::vector<Interval>& intervals, uint64_t* windows, int64_t* overlap_ns);
// What a simulated fault hit, in the terms of the failover checks both modes share.
FaultScope ScopeOf(const FaultRecord& fault);
// Fills the dual-acting, failover and liveness fields of `result` and appends violations.
void RunCheckers(const Records& records, const CheckerOptions& options, SimResult& result);

}  // namespace kvchaos::sim
