// HealthWindow: one CAS-updated word per backend (see health_window.h for the rules).
#include "core/store/health_window.h"

#include <algorithm>
#include <bit>
#include <string>

#include "core/common/assert.h"

namespace kvchaos::store {

std::string_view WindowChangeName(WindowChange change) {
  switch (change) {
    case WindowChange::kNone: return "none";
    case WindowChange::kTripped: return "tripped";
    case WindowChange::kRecovered: return "recovered";
    case WindowChange::kDropped: return "dropped";
  }
  return "unknown";
}

HealthWindow::HealthWindow(int window_size, int failure_threshold, bool initially_healthy)
    : window_size_(std::clamp(window_size, 1, kMaxWindowSize)),
      failure_threshold_(std::clamp(failure_threshold, 1, window_size_)),
      history_mask_((window_size_ == 64 ? ~0ULL : (1ULL << window_size_) - 1)),
      state_(initially_healthy ? kHealthyBit : 0) {}

void HealthWindow::CheckState(uint64_t state) const {
  const int count = static_cast<int>((state & kCountMask) >> kCountShift);
  const int failures = std::popcount(state & history_mask_);
  KVCHAOS_ASSERT((state & ~(history_mask_ | kCountMask | kHealthyBit)) == 0,
                 "health window state has stray bits: " + std::to_string(state));
  KVCHAOS_ASSERT(count <= window_size_ && failures <= count,
                 "health window holds " + std::to_string(count) + " results with " + std::to_string(failures) +
                     " failures (window " + std::to_string(window_size_) + ")");
  // A healthy window never holds the trip threshold (it would have tripped), and one that has
  // recovered or never tripped says so by its bit alone.
  KVCHAOS_ASSERT((state & kHealthyBit) == 0 || failures < failure_threshold_,
                 "healthy window with " + std::to_string(failures) + " failures, threshold " +
                     std::to_string(failure_threshold_));
}

int HealthWindow::count() const {
  return static_cast<int>((state_.load(std::memory_order_acquire) & kCountMask) >> kCountShift);
}

int HealthWindow::failures() const {
  return std::popcount(state_.load(std::memory_order_acquire) & history_mask_);
}

WindowChange HealthWindow::Record(bool success, SampleSource source) {
  uint64_t old_state = state_.load(std::memory_order_acquire);
  for (;;) {
    CheckState(old_state);
    const bool healthy = (old_state & kHealthyBit) != 0;
    if (source == SampleSource::kBusiness && success && !healthy) return WindowChange::kDropped;
    if (source == SampleSource::kProbe && healthy) return WindowChange::kDropped;
    const uint64_t history = old_state & history_mask_;
    const int count = static_cast<int>((old_state & kCountMask) >> kCountShift);
    // Steady state: nothing would change, so do not write (keeps the line shared between cores).
    if (success && healthy && history == 0 && count == window_size_) return WindowChange::kNone;

    const uint64_t new_history = ((history << 1) | (success ? 0 : 1)) & history_mask_;
    const int new_count = std::min(count + 1, window_size_);
    const int failures = std::popcount(new_history);
    bool new_healthy = healthy;
    WindowChange change = WindowChange::kNone;
    if (healthy && failures >= failure_threshold_) {
      new_healthy = false;
      change = WindowChange::kTripped;
    } else if (!healthy && new_count == window_size_ && failures == 0) {
      new_healthy = true;
      change = WindowChange::kRecovered;
    }
    const uint64_t new_state =
        new_history | (static_cast<uint64_t>(new_count) << kCountShift) | (new_healthy ? kHealthyBit : 0);
    CheckState(new_state);
    if (state_.compare_exchange_weak(old_state, new_state, std::memory_order_acq_rel, std::memory_order_acquire)) {
      return change;
    }
  }
}

}  // namespace kvchaos::store
