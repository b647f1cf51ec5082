// Clock faults of real mode through the clock preload library; see fake_clock.h.
#include "harness/real/fake_clock.h"

#include "harness/real/preload_library.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace kvchaos::harness::real {

Result<std::string> FindClockPreload() {
  return FindPreloadLibrary(PreloadLibrary{"libkvchaos_clock_preload.so", "KVCHAOS_CLOCK_PRELOAD", "kvchaos_clock_preload",
                                           "clock faults in real mode"});
}

void FakeClockModel::Jump(MonoTime, Duration by) { wall_step_ += by; }

void FakeClockModel::SetRate(MonoTime now, double rate) {
  gain_ = MonoOffsetAt(now);  // fold the time gained so far into the offset
  ref_ = now;
  drift_ppb_ = std::llround((rate - 1.0) * 1e9);
}

Duration FakeClockModel::MonoOffsetAt(MonoTime t) const {
  // clock_preload.c's arithmetic exactly: floor of the scaled span.
  __extension__ typedef __int128 Int128;
  const Int128 scaled = static_cast<Int128>((t - ref_).count()) * drift_ppb_;
  Int128 q = scaled / 1'000'000'000;
  if (scaled % 1'000'000'000 != 0 && scaled < 0) --q;
  return gain_ + Duration(static_cast<int64_t>(q));
}

std::string FakeClockModel::FileLine() const {
  return "ref_ns=" + std::to_string(ref_.time_since_epoch().count()) + " gain_ns=" + std::to_string(gain_.count()) +
         " drift_ppb=" + std::to_string(drift_ppb_) + " wall_step_ns=" + std::to_string(wall_step_.count());
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << text;
    f.close();
    if (!f) return Status::IoError("cannot write " + tmp, errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    return Status::IoError("rename " + tmp + " to " + path + ": " + std::strerror(err), err);
  }
  return Status::Ok();
}

NodeClocks::NodeClocks(std::string preload, std::string dir, int nodes)
    : preload_(std::move(preload)), dir_(std::move(dir)), nodes_(static_cast<size_t>(nodes)) {}

std::string NodeClocks::ControlPath(int i) const { return dir_ + "/node-" + std::to_string(i) + ".clock"; }

std::vector<std::string> NodeClocks::Env(int i) const {
  std::vector<std::string> env{"KVCHAOS_CLOCK_FILE=" + ControlPath(i)};
  AddPreload(env, preload_);
  return env;
}

Status NodeClocks::ProcessStarting(int i, MonoTime) { return Write(i); }

Status NodeClocks::Jump(int i, MonoTime now, Duration by) {
  nodes_[static_cast<size_t>(i)].Jump(now, by);
  return Write(i);
}

Status NodeClocks::SetDriftPpm(int i, MonoTime now, double ppm) {
  // The simulator's range: both clocks keep running forward (the preload refuses anything else).
  if (!(ppm > -500000 && ppm < 1000000)) {
    return Status::InvalidArgument("clock drift " + std::to_string(ppm) + " ppm is out of range (-500000, 1000000)");
  }
  nodes_[static_cast<size_t>(i)].SetRate(now, 1.0 + ppm / 1e6);
  return Write(i);
}

Status NodeClocks::Write(int i) const {
  return WriteFileAtomically(ControlPath(i), "# kvchaos run: node-" + std::to_string(i) +
                                                 "'s clocks (harness/real/clock_preload/clock_preload.c reads this)\n" +
                                                 nodes_[static_cast<size_t>(i)].FileLine() + "\n");
}

}  // namespace kvchaos::harness::real
