// BackendSet: the configured access paths of one store, each with its HealthWindow and the counts
// of what its I/O did (for metrics), and the routing over them.
//
// Routing (upstream's, fixed per block): the primary of a block is hash % n, where n is the number
// of configured (normalised, de-duplicated) paths — health changes never change the modulus. The
// candidates walk forward from the primary with wrap-around, skipping unavailable paths and those
// this operation already tried; n = 4, hash % 4 = 3 gives 3 → 0 → 1 → 2. With no available path an
// operation fails with StoreUnhealthy.
//
// Beyond upstream (where lock-free routing is a TODO): the available list is an immutable snapshot,
// one 64-bit mask published atomically, so SelectNext and CheckHealth never take a lock. Recording
// a result is a CAS on the backend's window; only a state change (trip or recovery) takes the
// mutex, which rebuilds the mask from the windows and appends to the transition log.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/store/health_window.h"

namespace kvchaos::store {

struct HealthTransition {
  int backend = 0;
  std::string path;
  bool available = false;  // the new state
  SampleSource source = SampleSource::kBusiness;
  MonoTime at{};
};

// What the business I/O of one path did, beyond its window's last results (metrics).
struct BackendIoCounts {
  std::map<int, int64_t> errors_by_errno;  // failed attempts by errno (0: an error without one)
  int64_t attempt_timeouts = 0;            // attempts given up at their deadline
  int64_t late_completions = 0;            // attempts that completed after their deadline
  int64_t retries = 0;                     // attempts that retried a shard here after another path failed it
};

class BackendSet {
 public:
  static constexpr int kMaxBackends = 64;

  // `paths` must be distinct and 1..64 of them (PosixStoreConfig::NormalizeAndValidate ensures it).
  // `ignore_failures`: a planted bug of the simulator (StoreTestingKnobs::health_never_trips).
  BackendSet(Runtime& runtime, std::vector<std::string> paths, int window_size, int failure_threshold,
             bool ignore_failures = false);

  int size() const { return static_cast<int>(paths_.size()); }
  const std::string& path(int backend) const { return paths_[backend]; }
  const std::vector<std::string>& paths() const { return paths_; }

  // The published snapshot: bit i set ⇔ backend i is available. Lock-free.
  uint64_t available_mask() const { return available_.load(std::memory_order_acquire); }
  bool available(int backend) const { return (available_mask() >> backend) & 1; }
  bool any_available() const { return available_mask() != 0; }
  std::vector<int> Unavailable() const;

  int Primary(uint64_t hash) const { return static_cast<int>(hash % paths_.size()); }
  // The next candidate for a block with `hash`: the first available backend at or after the
  // primary (wrapping) whose bit is not in `tried`; -1 when there is none. Lock-free.
  int SelectNext(uint64_t hash, uint64_t tried) const { return SelectNextIn(available_mask(), hash, tried); }
  int SelectNextIn(uint64_t mask, uint64_t hash, uint64_t tried) const;
  // The whole candidate order of a block over one snapshot.
  std::vector<int> CandidateOrder(uint64_t hash) const;

  // Feeds one result to a backend's window (rules in health_window.h); publishes a new snapshot and
  // logs the transition when the state changed.
  WindowChange Record(int backend, bool success, SampleSource source);

  const HealthWindow& window(int backend) const { return *windows_[backend]; }
  std::vector<HealthTransition> Transitions() const EXCLUDES(mu_);
  // Counts of a backend's I/O (Transfer reports them; none of them changes health).
  void CountError(int backend, int sys_errno) EXCLUDES(mu_);
  void CountTimeout(int backend) EXCLUDES(mu_);
  void CountLate(int backend) EXCLUDES(mu_);
  void CountRetry(int backend) EXCLUDES(mu_);
  BackendIoCounts IoCounts(int backend) const EXCLUDES(mu_);

  // Called (outside any lock of this class) after every state change.
  void SetListener(std::function<void(const HealthTransition&)> listener) EXCLUDES(mu_);

 private:
  Runtime& runtime_;
  std::vector<std::string> paths_;
  uint64_t all_;  // one bit per configured path
  const bool ignore_failures_;
  std::vector<std::unique_ptr<HealthWindow>> windows_;
  std::atomic<uint64_t> available_;
  mutable Mutex mu_;
  std::vector<HealthTransition> transitions_ GUARDED_BY(mu_);
  std::vector<BackendIoCounts> io_counts_ GUARDED_BY(mu_);  // per backend; only failures and retries count
  std::shared_ptr<std::function<void(const HealthTransition&)>> listener_ GUARDED_BY(mu_);
};

}  // namespace kvchaos::store
