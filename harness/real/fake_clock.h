// FakeClock: the clock faults of real mode. Node processes of a run with clock faults start under
// our own LD_PRELOAD library (harness/real/clock_preload/clock_preload.c), each reading its clocks
// from its own clock file in the run directory; a jump or a drift rewrites that file (atomically)
// while the node runs, and the library rereads it within a few ms. The machine's clocks are never
// touched.
//
// The model is sim/sim_clock.h's: a drift scales the node's monotonic clock (steady_clock, which the
// elector's leases run on) and with it the wall clock, continuous where the rate changes; a jump
// steps the wall clock (system_clock) only, either way; the monotonic clock never goes back. Both
// are kept as offsets from the machine's true CLOCK_MONOTONIC, which every process reads alike, so
// a restarted node keeps its clock as a host would. The library also moves the deadlines of waits
// and sleeps on the faked clocks (condition variables, sleep_until, clock_nanosleep, ...) to the
// true clock, so a node waits as long as its own clock says. (libfaketime, used before, could not:
// it steps the monotonic clock with the wall clock, backwards too, and does not translate
// pthread_cond_clockwait, so such waits hang.)
#pragma once

#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos::harness::real {

// The preload library: $KVCHAOS_CLOCK_PRELOAD when set, else next to the running binary (the build
// tree's tools/kvchaos/, an install's bin/ or lib/kvchaos/), else where this build put it. The
// error says how to get it.
Result<std::string> FindClockPreload();

class FakeClockModel {
 public:
  // The wall clock steps by `by` at `now` (forward when positive); the monotonic clock does not.
  void Jump(MonoTime now, Duration by);
  // From `now` on both clocks run at `rate` (1 = true time), continuous at `now`.
  void SetRate(MonoTime now, double rate);
  // fake monotonic - true monotonic at true time `t`.
  Duration MonoOffsetAt(MonoTime t) const;
  // fake wall - true wall at true time `t`.
  Duration WallOffsetAt(MonoTime t) const { return MonoOffsetAt(t) + wall_step_; }
  double rate() const { return 1.0 + static_cast<double>(drift_ppb_) / 1e9; }
  // The data line of the clock file (clock_preload.c reads it):
  // "ref_ns=R gain_ns=G drift_ppb=P wall_step_ns=S" over the true CLOCK_MONOTONIC reading T:
  // fake monotonic = T + G + floor((T - R) * P / 1e9), fake wall = true wall + (that - T) + S.
  std::string FileLine() const;

 private:
  MonoTime ref_{};
  Duration gain_{};      // fake monotonic - true monotonic at ref_
  int64_t drift_ppb_ = 0;
  Duration wall_step_{};  // the sum of the wall clock's jumps
};

// Writes `text` to `path` through a temporary file and rename(2), so a reader (the preload
// rereading the file) sees the old or the new contents, never a part.
Status WriteFileAtomically(const std::string& path, const std::string& text);

// The fake clocks of a run's nodes: one model and clock file per node.
class NodeClocks {
 public:
  NodeClocks(std::string preload, std::string dir, int nodes);

  // KEY=VALUE entries node `i`'s process is started with.
  std::vector<std::string> Env(int i) const;
  std::string ControlPath(int i) const;
  // Node `i` is about to be (re)started: its file is written (it keeps the clock it had).
  Status ProcessStarting(int i, MonoTime now);
  Status Jump(int i, MonoTime now, Duration by);
  Status SetDriftPpm(int i, MonoTime now, double ppm);
  const FakeClockModel& model(int i) const { return nodes_[static_cast<size_t>(i)]; }

 private:
  Status Write(int i) const;

  std::string preload_;
  std::string dir_;
  std::vector<FakeClockModel> nodes_;
};

}  // namespace kvchaos::harness::real
