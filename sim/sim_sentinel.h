// SimSentinel: a Redis primary, its one replica and the sentinels that promote it, as the
// simulator's `coordination: redis-sentinel`. Replication is asynchronous: each write the primary
// applies (the state of its key, sim/sim_redis.h) reaches the replica after a lag drawn from the
// run's Rng, in order; a replication cut holds the stream back (the backlog follows when it ends,
// as a partial resync does), and what has not reached the replica when the primary dies is lost.
// Failover() kills the primary; after a promotion delay (the sentinels' down-after plus their
// vote) the replica becomes the primary with whatever it had received, and the dead one stays down
// (one replica: one failover a run). Clients (SimCoordinationClient) send each request to
// primary(); a request that reaches a dead or demoted server is refused, as a connection error or
// READONLY makes the production client ask the sentinels again.
// The ground truth (grants, lease ends, duplicate holders) is the two servers' shared one.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>

#include "core/common/rng.h"
#include "sim/sim_redis.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

struct SimSentinelOptions {
  // Each write reaches the replica within [min, max] after the primary applied it.
  int64_t replication_lag_min_ns = 100'000;    // 0.1 ms
  int64_t replication_lag_max_ns = 5'000'000;  // 5 ms
  // From the primary's death to the replica's promotion (real mode's sentinels: about 2-4 s).
  int64_t promotion_delay_min_ns = 2'000'000'000;
  int64_t promotion_delay_max_ns = 4'000'000'000;
};

class SimSentinel {
 public:
  // `primary` and `replica` run on their own hosts; the replica must share the primary's truth.
  SimSentinel(SimRuntime& runtime, SimRedis& primary, SimRedis& replica, Rng rng, SimSentinelOptions options = {});
  SimSentinel(const SimSentinel&) = delete;
  SimSentinel& operator=(const SimSentinel&) = delete;

  // The server clients send to now: the first primary, then (once promoted) the replica. During
  // the promotion delay it is the dead primary: requests are refused.
  SimRedis& primary() { return *current_; }
  bool IsPrimary(const SimRedis& server) const { return &server == current_; }

  // Holds the replication stream back (cut = true) or lets the backlog through (false).
  void CutReplication(bool cut);
  // Kills the primary and schedules the promotion. False when no failover is left (the replica
  // was already promoted) or one is under way.
  bool Failover();

  // The primary died (the promotion is pending or done): it is not to be restarted.
  bool failed_over() const { return failed_over_; }
  // When the promotion is (or was) due; -1 before a failover.
  TrueNs promotion_at() const { return promotion_at_; }
  uint64_t promotions() const { return promotions_; }
  uint64_t writes_replicated() const { return writes_replicated_; }
  // Writes the promoted replica never received (in flight or held back when the primary died).
  uint64_t writes_lost() const { return writes_lost_; }
  bool replicating() const { return !cut_ && !failed_over_; }

 private:
  struct Entry {
    TrueNs arrives = 0;
    KeyState state;
  };
  void OnWrite(KeyState state);
  // Schedules delivery of the queue's head (one timer at a time).
  void ScheduleHead();
  void DeliverDue();
  void Promote();

  SimRuntime& runtime_;
  SimRedis& first_;
  SimRedis& replica_;
  SimRedis* current_;
  Rng rng_;
  const SimSentinelOptions options_;
  std::deque<Entry> stream_;  // FIFO: arrival times never decrease
  bool cut_ = false;
  bool timer_armed_ = false;
  bool failed_over_ = false;  // the primary died (promotion pending or done)
  TrueNs promotion_at_ = -1;
  uint64_t promotions_ = 0;
  uint64_t writes_replicated_ = 0;
  uint64_t writes_lost_ = 0;
};

}  // namespace kvchaos::sim
