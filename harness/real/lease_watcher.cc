// Real mode's watch on the leader lock's lease; see lease_watcher.h.
#include "harness/real/lease_watcher.h"

#include "core/common/thread_util.h"

namespace kvchaos::harness::real {
namespace {

// Well under a loop interval, so the last renewal of a term is seen before its lease runs out.
constexpr auto kPollPeriod = std::chrono::milliseconds(10);
// A paused or partitioned backend must not stall the watch past a few polls.
constexpr auto kCallTimeout = std::chrono::milliseconds(50);

}  // namespace

LeaseWatcher::LeaseWatcher(std::unique_ptr<election::CoordinationBackend> backend, const NodeCluster& cluster,
                           MonoTime start)
    : backend_(std::move(backend)), cluster_(cluster), start_(start) {}

LeaseWatcher::~LeaseWatcher() { Stop(); }

void LeaseWatcher::Start() {
  thread_ = std::thread([this] {
    SetCurrentThreadName("kvc_lease_watch");
    Loop();
  });
}

void LeaseWatcher::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void LeaseWatcher::Loop() {
  Runtime& rt = Runtime::Real();
  while (!stop_) {
    const MonoTime asked = rt.Now();
    Result<election::LockHolderInfo> info = backend_->GetLockHolder(election::kLeaderLockKey, asked + kCallTimeout);
    const MonoTime answered = rt.Now();
    if (info.ok() && !info->holder.empty() && info->token > 0) {
      const int node = cluster_.IndexOf(info->holder);
      if (node >= 0) {
        const int64_t end_ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(answered + info->remaining_ttl - start_).count();
        std::lock_guard<std::mutex> lock(mu_);
        int64_t& known = ends_ns_[{node, info->token}];
        known = std::max(known, end_ns);
      }
      ++answers_;
    }
    rt.SleepUntil(asked + kPollPeriod);
  }
}

std::vector<sim::TermLeaseEnd> LeaseWatcher::LeaseEnds() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<sim::TermLeaseEnd> out;
  for (const auto& [holding, end_ns] : ends_ns_) out.push_back(sim::TermLeaseEnd{holding.first, holding.second, end_ns});
  return out;
}

}  // namespace kvchaos::harness::real
