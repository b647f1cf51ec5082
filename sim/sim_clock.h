// SimClock: one node's (or the backend's) view of time in the simulator. True time is the
// simulator's single timeline in nanoseconds; each clock maps it to a local monotonic reading
// (offset, drift in ppm, forward steps) and a wall reading (the monotonic one plus a wall offset
// that may step either way, as NTP or an operator would step it). All arithmetic is integer, so
// readings are the same on every compiler and -O level.
#pragma once

#include <cstdint>

#include "core/common/runtime.h"

namespace kvchaos::sim {

// Nanoseconds on the simulator's true timeline, from 0 at the start of a run.
using TrueNs = int64_t;

class SimClock {
 public:
  // `mono_offset` is the local monotonic reading at true time 0 (nodes boot at different times).
  explicit SimClock(Duration mono_offset = Duration::zero(), int64_t drift_ppm = 0,
                    Duration wall_offset = Duration::zero());

  MonoTime MonoAt(TrueNs t) const;
  WallTime WallAt(TrueNs t) const;
  // The earliest true time (>= `not_before`) at which the monotonic reading reaches `local`.
  TrueNs TrueWhenMonoReaches(MonoTime local, TrueNs not_before) const;

  // Changes the drift from true time `now` on (readings stay continuous).
  void SetDriftPpm(int64_t drift_ppm, TrueNs now);
  int64_t drift_ppm() const { return drift_ppm_; }
  // A monotonic clock never goes back: steps of the monotonic reading are forward only
  // (a VM resumed after a host stall); negative values are clamped to zero.
  void StepMonoForward(Duration forward, TrueNs now);
  // Steps the wall reading by `delta` (either sign), as `date -s` or an NTP step would.
  void StepWall(Duration delta);

 private:
  TrueNs base_true_ = 0;
  int64_t base_mono_ns_ = 0;
  int64_t drift_ppm_ = 0;
  int64_t wall_offset_ns_ = 0;
};

}  // namespace kvchaos::sim
