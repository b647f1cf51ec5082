// Property: HealthWindow (one CAS-updated word) behaves exactly like a tiny reference model — a
// deque of the last `window` results and a healthy flag — for random sample sequences, window
// sizes, thresholds and sources, including the late-result rules.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <deque>

#include "core/store/health_window.h"

namespace kvchaos::store {
namespace {

struct ModelWindow {
  int window;
  int threshold;
  bool healthy = true;
  std::deque<bool> results;  // true = failure, newest at the back

  WindowChange Record(bool success, SampleSource source) {
    if (source == SampleSource::kBusiness && success && !healthy) return WindowChange::kDropped;
    if (source == SampleSource::kProbe && healthy) return WindowChange::kDropped;
    results.push_back(!success);
    if (static_cast<int>(results.size()) > window) results.pop_front();
    int failures = 0;
    for (bool f : results) failures += f ? 1 : 0;
    if (healthy && failures >= threshold) {
      healthy = false;
      return WindowChange::kTripped;
    }
    if (!healthy && static_cast<int>(results.size()) == window && failures == 0) {
      healthy = true;
      return WindowChange::kRecovered;
    }
    return WindowChange::kNone;
  }
};

RC_GTEST_PROP(StoreHealthWindowProps, MatchesTheReferenceModel, ()) {
  const int window = *rc::gen::inRange(1, HealthWindow::kMaxWindowSize + 1);
  const int threshold = *rc::gen::inRange(1, window + 1);
  const bool start_healthy = *rc::gen::arbitrary<bool>();
  const auto samples = *rc::gen::container<std::vector<std::pair<bool, bool>>>(
      rc::gen::pair(rc::gen::weightedElement<bool>({{3, true}, {1, false}}), rc::gen::arbitrary<bool>()));
  HealthWindow real(window, threshold, start_healthy);
  ModelWindow model{window, threshold, start_healthy};
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto [success, probe] = samples[i];
    const SampleSource source = probe ? SampleSource::kProbe : SampleSource::kBusiness;
    const WindowChange got = real.Record(success, source);
    const WindowChange want = model.Record(success, source);
    RC_ASSERT(got == want);
    RC_ASSERT(real.healthy() == model.healthy);
    RC_ASSERT(real.count() == static_cast<int>(model.results.size()));
  }
}

}  // namespace
}  // namespace kvchaos::store
