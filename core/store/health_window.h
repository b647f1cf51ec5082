// HealthWindow: the sliding window of I/O results that decides whether one backend is available.
// Semantics of upstream (ucm/store/detail/health_window.h), counted in results, not in time:
//   - a healthy backend trips as soon as `failure_threshold` failures are in the last
//     `window_size` results (the window need not be full, failures need not be consecutive);
//   - an unhealthy backend recovers only when the window is full and holds no failure, i.e.
//     `window_size` successes in a row after the last failure;
//   - the window is not cleared on a state change, so a window that starts unhealthy, or that just
//     tripped, needs a full window of successes.
// Who may feed it (the late-result rules of the seed):
//   - business I/O: every result except NotFound; a business *success* on an unhealthy backend is
//     dropped (a late success never restores an excluded path), a failure always counts;
//   - recovery probes: only while the backend is unhealthy; a probe result for a healthy backend is
//     dropped.
// The whole state fits in one 64-bit word updated by compare-and-swap, so recording a result never
// takes a lock; the steady state (healthy, full window of successes, another success) is a plain
// load with no write, so concurrent I/O threads do not fight over the cache line.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

namespace kvchaos::store {

enum class SampleSource : uint8_t { kBusiness, kProbe };

enum class WindowChange : uint8_t {
  kNone,       // recorded, state unchanged
  kTripped,    // recorded, healthy → unhealthy
  kRecovered,  // recorded, unhealthy → healthy
  kDropped,    // not recorded (see the rules above)
};
std::string_view WindowChangeName(WindowChange change);

class HealthWindow {
 public:
  static constexpr int kMaxWindowSize = 48;

  // window_size in [1, kMaxWindowSize], failure_threshold in [1, window_size] (checked by the
  // config; out-of-range values are clamped here so the window stays well defined).
  HealthWindow(int window_size, int failure_threshold, bool initially_healthy = true);
  HealthWindow(const HealthWindow&) = delete;
  HealthWindow& operator=(const HealthWindow&) = delete;

  WindowChange Record(bool success, SampleSource source);

  bool healthy() const { return (state_.load(std::memory_order_acquire) & kHealthyBit) != 0; }
  // Results currently in the window and failures among them.
  int count() const;
  int failures() const;
  int window_size() const { return window_size_; }
  int failure_threshold() const { return failure_threshold_; }

 private:
  // bits 0..47: the last results, bit 0 the newest, 1 = failure; bits 48..55: how many results
  // are in the window; bit 56: healthy.
  static constexpr uint64_t kHistoryBits = 48;
  static constexpr uint64_t kCountShift = 48;
  static constexpr uint64_t kCountMask = 0xffULL << kCountShift;
  static constexpr uint64_t kHealthyBit = 1ULL << 56;

  // The state word's invariants (count within the window, failures within the count, no stray
  // bits), checked on every state read for a change and on every state written.
  void CheckState(uint64_t state) const;

  int window_size_;
  int failure_threshold_;
  uint64_t history_mask_;
  std::atomic<uint64_t> state_;
};

}  // namespace kvchaos::store
