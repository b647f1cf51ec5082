// FakeClock: the clock faults of real mode. Node processes of a run with clock faults start under
// libfaketime (Debian package libfaketime), each reading its clock from its own control file in
// the run directory; a jump or a drift rewrites that file while the node runs. The machine's
// clock is never touched.
//
// libfaketime's control line "+<offset>s x<rate>" means: fake = start + offset + (t - start) * rate,
// where start is when the process loaded the library. A rate therefore scales the time since the
// process started, not since the rate was set: FakeClockModel keeps the fake clock continuous by
// tracking (fake - true) as an offset at a reference time that grows at (rate - 1), and turns it
// into the line for a given process start (a restarted node keeps its clock, as a host would).
//
// Only CLOCK_REALTIME (system_clock) is faked: the node's CLOCK_MONOTONIC (steady_clock, which the
// elector's leases run on) stays true, because libfaketime moves it by the same offset as the wall
// clock (a backward jump would make a monotonic clock run back) and its faked monotonic deadlines
// would hang the waits it does not translate (pthread_cond_clockwait). Sim mode's clock-jump steps
// the wall clock only, as here; its clock-drift also drifts the node's monotonic clock, which real
// mode does not (scenarios/README.md says so).
#pragma once

#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos::harness::real {

// libfaketime's multithreaded build (the node runs many threads): $KVCHAOS_LIBFAKETIME when set,
// else the Debian paths. The error names the package to install.
Result<std::string> FindLibfaketime();

// "+5.000000000 x1.002000000": an offset in seconds and a rate, as libfaketime reads them.
std::string FaketimeControlLine(Duration offset, double rate);

class FakeClockModel {
 public:
  // The clock steps by `by` at `now` (forward when positive).
  void Jump(MonoTime now, Duration by);
  // From `now` on the clock runs at `rate` (1 = true time), continuous at `now`.
  void SetRate(MonoTime now, double rate);
  // fake - true at true time `t`.
  Duration OffsetAt(MonoTime t) const;
  double rate() const { return rate_; }
  // The control line for a process that loaded libfaketime at `process_start`.
  std::string ControlLine(MonoTime process_start) const;

 private:
  Duration base_{};  // fake - true at ref_
  MonoTime ref_{};
  double rate_ = 1.0;
};

// Writes `text` to `path` through a temporary file and rename(2), so a reader (libfaketime
// rereading the file on every clock read) sees the old or the new contents, never a part.
Status WriteFileAtomically(const std::string& path, const std::string& text);

// The fake clocks of a run's nodes: one model and control file per node.
class NodeClocks {
 public:
  NodeClocks(std::string libfaketime, std::string dir, int nodes);

  // KEY=VALUE entries node `i`'s process is started with.
  std::vector<std::string> Env(int i) const;
  std::string ControlPath(int i) const;
  // Node `i` is about to be (re)started: its file is written for a process starting now.
  Status ProcessStarting(int i, MonoTime now);
  Status Jump(int i, MonoTime now, Duration by);
  Status SetDriftPpm(int i, MonoTime now, double ppm);
  const FakeClockModel& model(int i) const { return nodes_[static_cast<size_t>(i)].model; }

 private:
  struct Node {
    FakeClockModel model;
    MonoTime process_start{};
  };
  Status Write(int i) const;

  std::string libfaketime_;
  std::string dir_;
  std::vector<Node> nodes_;
};

}  // namespace kvchaos::harness::real
