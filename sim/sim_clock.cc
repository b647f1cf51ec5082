// Integer clock arithmetic: mono(t) = base_mono + floor((t - base_true) * (1e6 + ppm) / 1e6).
#include "sim/sim_clock.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kvchaos::sim {
namespace {

__extension__ typedef __int128 Int128;
constexpr int64_t kMillion = 1'000'000;

void CheckDrift(int64_t ppm) {
  if (ppm <= -kMillion / 2 || ppm >= kMillion) {
    throw std::invalid_argument("clock drift " + std::to_string(ppm) + " ppm is out of range (-500000, 1000000)");
  }
}

}  // namespace

SimClock::SimClock(Duration mono_offset, int64_t drift_ppm, Duration wall_offset)
    : base_mono_ns_(mono_offset.count()), drift_ppm_(drift_ppm), wall_offset_ns_(wall_offset.count()) {
  CheckDrift(drift_ppm);
}

MonoTime SimClock::MonoAt(TrueNs t) const {
  const int64_t dt = t - base_true_;
  if (drift_ppm_ == 0) return MonoTime(Duration(base_mono_ns_ + dt));
  // dt * ppm fits in 64 bits for any run shorter than ~25 h at up to 100000 ppm.
  if (dt >= 0 && dt < (int64_t{1} << 46) && drift_ppm_ > -kMillion && drift_ppm_ < kMillion / 10) {
    const int64_t extra = dt * drift_ppm_;
    int64_t q = extra / kMillion;
    if (extra % kMillion != 0 && extra < 0) --q;  // floor
    return MonoTime(Duration(base_mono_ns_ + dt + q));
  }
  const Int128 scaled = static_cast<Int128>(dt) * (kMillion + drift_ppm_);
  Int128 q = scaled / kMillion;
  if (scaled % kMillion != 0 && scaled < 0) --q;
  return MonoTime(Duration(base_mono_ns_ + static_cast<int64_t>(q)));
}

WallTime SimClock::WallAt(TrueNs t) const {
  return WallTime(Duration(MonoAt(t).time_since_epoch().count() + wall_offset_ns_));
}

TrueNs SimClock::TrueWhenMonoReaches(MonoTime local, TrueNs not_before) const {
  const Int128 need = static_cast<Int128>(local.time_since_epoch().count()) - base_mono_ns_;
  if (need <= 0) return not_before;
  const Int128 rate = kMillion + drift_ppm_;
  // Smallest dt with floor(dt * rate / 1e6) >= need, i.e. dt * rate >= need * 1e6.
  const Int128 dt = (need * kMillion + rate - 1) / rate;
  return std::max(not_before, base_true_ + static_cast<TrueNs>(dt));
}

void SimClock::SetDriftPpm(int64_t drift_ppm, TrueNs now) {
  CheckDrift(drift_ppm);
  base_mono_ns_ = MonoAt(now).time_since_epoch().count();
  base_true_ = now;
  drift_ppm_ = drift_ppm;
}

void SimClock::StepMonoForward(Duration forward, TrueNs now) {
  base_mono_ns_ = MonoAt(now).time_since_epoch().count() + std::max<int64_t>(0, forward.count());
  base_true_ = now;
}

void SimClock::StepWall(Duration delta) { wall_offset_ns_ += delta.count(); }

}  // namespace kvchaos::sim
