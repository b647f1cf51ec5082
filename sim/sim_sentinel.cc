// SimSentinel: asynchronous replication to one replica and its promotion (see the header).
#include "sim/sim_sentinel.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace kvchaos::sim {

SimSentinel::SimSentinel(SimRuntime& runtime, SimRedis& primary, SimRedis& replica, Rng rng, SimSentinelOptions options)
    : runtime_(runtime), first_(primary), replica_(replica), current_(&primary), rng_(std::move(rng)), options_(options) {
  if (primary.truth() != replica.truth()) {
    throw std::invalid_argument("SimSentinel: the replica must share its primary's ground truth");
  }
  if (options.replication_lag_min_ns < 0 || options.replication_lag_max_ns < options.replication_lag_min_ns ||
      options.promotion_delay_min_ns < 0 || options.promotion_delay_max_ns < options.promotion_delay_min_ns) {
    throw std::invalid_argument("SimSentinel: lag and promotion delay need 0 <= min <= max");
  }
  first_.SetWriteHook([this](KeyState state) { OnWrite(std::move(state)); });
}

void SimSentinel::OnWrite(KeyState state) {
  if (failed_over_) return;
  const int64_t lag = rng_.UniformInt(options_.replication_lag_min_ns, options_.replication_lag_max_ns);
  // In order: a write never overtakes an earlier one on the replication link.
  TrueNs arrives = runtime_.true_now() + lag;
  if (!stream_.empty()) arrives = std::max(arrives, stream_.back().arrives);
  stream_.push_back(Entry{arrives, std::move(state)});
  if (!cut_) ScheduleHead();
}

void SimSentinel::ScheduleHead() {
  if (timer_armed_ || stream_.empty() || cut_ || failed_over_) return;
  timer_armed_ = true;
  runtime_.At(std::max(stream_.front().arrives, runtime_.true_now()), [this] {
    timer_armed_ = false;
    DeliverDue();
    ScheduleHead();
  });
}

void SimSentinel::DeliverDue() {
  if (cut_ || failed_over_) return;  // held back, or the primary died with them
  while (!stream_.empty() && stream_.front().arrives <= runtime_.true_now()) {
    replica_.ApplyReplicated(stream_.front().state);
    stream_.pop_front();
    ++writes_replicated_;
  }
}

void SimSentinel::CutReplication(bool cut) {
  if (cut == cut_ || failed_over_) return;
  cut_ = cut;
  runtime_.trace().Event(runtime_.true_now(), replica_.host(), 0, cut ? "replication-cut" : "replication-resumed",
                         static_cast<int64_t>(stream_.size()));
  if (cut) return;
  // The backlog follows from now (a partial resync), in order, each write with a lag of its own.
  TrueNs last = runtime_.true_now();
  for (Entry& e : stream_) {
    e.arrives = std::max(last, runtime_.true_now() + rng_.UniformInt(options_.replication_lag_min_ns,
                                                                      options_.replication_lag_max_ns));
    last = e.arrives;
  }
  ScheduleHead();
}

bool SimSentinel::Failover() {
  if (failed_over_) return false;
  DeliverDue();  // what arrived by now is the replica's
  failed_over_ = true;
  writes_lost_ = stream_.size();
  stream_.clear();
  first_.SetWriteHook(nullptr);
  first_.Crash();
  const int64_t delay = rng_.UniformInt(options_.promotion_delay_min_ns, options_.promotion_delay_max_ns);
  runtime_.trace().Event(runtime_.true_now(), first_.host(), 0, "sentinel-failover", static_cast<int64_t>(writes_lost_),
                         delay);
  promotion_at_ = runtime_.true_now() + delay;
  runtime_.At(promotion_at_, [this] { Promote(); });
  return true;
}

void SimSentinel::Promote() {
  current_ = &replica_;
  ++promotions_;
  runtime_.trace().Event(runtime_.true_now(), replica_.host(), 0, "sentinel-promoted",
                         static_cast<int64_t>(writes_replicated_));
}

}  // namespace kvchaos::sim
