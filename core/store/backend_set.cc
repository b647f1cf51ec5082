// BackendSet: routing over an atomic availability snapshot, transitions under a mutex.
#include "core/store/backend_set.h"

#include <spdlog/spdlog.h>

#include <bit>
#include <string>

#include "core/common/assert.h"

namespace kvchaos::store {
namespace {

constexpr size_t kMaxTransitionsKept = 4096;

}  // namespace

BackendSet::BackendSet(Runtime& runtime, std::vector<std::string> paths, int window_size, int failure_threshold,
                       bool ignore_failures)
    : runtime_(runtime),
      paths_(std::move(paths)),
      all_(paths_.size() >= 64 ? ~0ULL : (1ULL << paths_.size()) - 1),
      ignore_failures_(ignore_failures),
      available_(0),
      mu_(runtime) {
  KVCHAOS_ASSERT(!paths_.empty() && paths_.size() <= static_cast<size_t>(kMaxBackends),
                 "a backend set needs 1.." + std::to_string(kMaxBackends) + " paths, got " +
                     std::to_string(paths_.size()));
  uint64_t mask = 0;
  for (size_t i = 0; i < paths_.size(); ++i) {
    windows_.push_back(std::make_unique<HealthWindow>(window_size, failure_threshold, /*initially_healthy=*/true));
    mask |= 1ULL << i;
  }
  available_.store(mask, std::memory_order_release);
  MutexLock lock(mu_);
  io_counts_.resize(paths_.size());
}

std::vector<int> BackendSet::Unavailable() const {
  std::vector<int> out;
  const uint64_t mask = available_mask();
  for (int i = 0; i < size(); ++i) {
    if (((mask >> i) & 1) == 0) out.push_back(i);
  }
  return out;
}

int BackendSet::SelectNextIn(uint64_t mask, uint64_t hash, uint64_t tried) const {
  const uint64_t n = paths_.size();
  const uint64_t candidates = mask & ~tried;
  if (candidates == 0) return -1;
  const uint64_t primary = hash % n;
  // Candidates at or after the primary first, then those before it (the wrap-around).
  KVCHAOS_ASSERT((candidates & ~all_) == 0, "routing mask " + std::to_string(mask) + " names backends past the " +
                                                std::to_string(n) + " configured");
  const uint64_t at_or_after = candidates & (~0ULL << primary);
  const int next = std::countr_zero(at_or_after != 0 ? at_or_after : candidates);
  KVCHAOS_ASSERT((candidates >> next & 1) != 0, "routing picked backend " + std::to_string(next) +
                                                    " outside its candidates " + std::to_string(candidates));
  return next;
}

std::vector<int> BackendSet::CandidateOrder(uint64_t hash) const {
  const uint64_t mask = available_mask();
  std::vector<int> order;
  uint64_t tried = 0;
  for (int next = SelectNextIn(mask, hash, tried); next >= 0; next = SelectNextIn(mask, hash, tried)) {
    order.push_back(next);
    tried |= 1ULL << next;
  }
  return order;
}

WindowChange BackendSet::Record(int backend, bool success, SampleSource source) {
  KVCHAOS_ASSERT(backend >= 0 && backend < size(), "a result for backend " + std::to_string(backend) + " of " +
                                                       std::to_string(size()));
  if (ignore_failures_ && !success) return WindowChange::kNone;
  const WindowChange change = windows_[backend]->Record(success, source);
  if (change != WindowChange::kTripped && change != WindowChange::kRecovered) return change;

  HealthTransition transition;
  transition.backend = backend;
  transition.path = paths_[backend];
  transition.available = change == WindowChange::kRecovered;
  transition.source = source;
  transition.at = runtime_.Now();
  std::shared_ptr<std::function<void(const HealthTransition&)>> listener;
  {
    MutexLock lock(mu_);
    // Rebuilt from the windows under the lock: whichever change publishes last sees them all.
    uint64_t mask = 0;
    for (size_t i = 0; i < windows_.size(); ++i) {
      if (windows_[i]->healthy()) mask |= 1ULL << i;
    }
    KVCHAOS_ASSERT((mask & ~all_) == 0, "rebuilt routing mask " + std::to_string(mask) + " past the paths");
    available_.store(mask, std::memory_order_release);
    if (transitions_.size() < kMaxTransitionsKept) transitions_.push_back(transition);
    listener = listener_;
  }
  if (transition.available) {
    spdlog::info("store backend '{}' is available again ({} successful probes in a row)", transition.path,
                 windows_[backend]->window_size());
  } else {
    spdlog::warn("store backend '{}' excluded: {} failures in the last {} results", transition.path,
                 windows_[backend]->failures(), windows_[backend]->count());
  }
  if (listener) (*listener)(transition);
  return change;
}

std::vector<HealthTransition> BackendSet::Transitions() const {
  MutexLock lock(mu_);
  return transitions_;
}

void BackendSet::CountError(int backend, int sys_errno) {
  MutexLock lock(mu_);
  ++io_counts_[static_cast<size_t>(backend)].errors_by_errno[sys_errno];
}

void BackendSet::CountTimeout(int backend) {
  MutexLock lock(mu_);
  ++io_counts_[static_cast<size_t>(backend)].attempt_timeouts;
}

void BackendSet::CountLate(int backend) {
  MutexLock lock(mu_);
  ++io_counts_[static_cast<size_t>(backend)].late_completions;
}

void BackendSet::CountRetry(int backend) {
  MutexLock lock(mu_);
  ++io_counts_[static_cast<size_t>(backend)].retries;
}

BackendIoCounts BackendSet::IoCounts(int backend) const {
  MutexLock lock(mu_);
  return io_counts_[static_cast<size_t>(backend)];
}

void BackendSet::SetListener(std::function<void(const HealthTransition&)> listener) {
  MutexLock lock(mu_);
  listener_ = std::make_shared<std::function<void(const HealthTransition&)>>(std::move(listener));
}

}  // namespace kvchaos::store
