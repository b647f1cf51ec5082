// Clock faults of real mode through libfaketime; see fake_clock.h.
#include "harness/real/fake_clock.h"

#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace kvchaos::harness::real {

Result<std::string> FindLibfaketime() {
  if (const char* env = std::getenv("KVCHAOS_LIBFAKETIME"); env != nullptr && *env != '\0') {
    if (::access(env, R_OK) == 0) return std::string(env);
    return Status::NotFound(std::string("KVCHAOS_LIBFAKETIME=") + env + " is not a readable file");
  }
  // The MT build serializes its clock reads; the plain one races on its parse buffers when a
  // multithreaded process rereads the control file.
  for (const char* path : {"/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                           "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
                           "/usr/lib/faketime/libfaketimeMT.so.1", "/usr/local/lib/faketime/libfaketimeMT.so.1"}) {
    if (::access(path, R_OK) == 0) return std::string(path);
  }
  return Status::NotFound(
      "clock faults in real mode need libfaketime (Debian package libfaketime: apt-get install libfaketime; "
      "looked for faketime/libfaketimeMT.so.1 under /usr/lib/<arch>, /usr/lib, /usr/local/lib; "
      "or set KVCHAOS_LIBFAKETIME)");
}

std::string FaketimeControlLine(Duration offset, double rate) {
  // Whole nanoseconds printed exactly: libfaketime reads the number with atof, sign included.
  const int64_t ns = offset.count();
  const uint64_t abs_ns = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%c%" PRIu64 ".%09" PRIu64 " x%.9f", ns < 0 ? '-' : '+', abs_ns / 1'000'000'000u,
                abs_ns % 1'000'000'000u, rate);
  return buf;
}

void FakeClockModel::Jump(MonoTime now, Duration by) {
  base_ = OffsetAt(now) + by;
  ref_ = now;
}

void FakeClockModel::SetRate(MonoTime now, double rate) {
  base_ = OffsetAt(now);  // fold the fake time run so far into the offset
  ref_ = now;
  rate_ = rate;
}

Duration FakeClockModel::OffsetAt(MonoTime t) const {
  const double gained = static_cast<double>((t - ref_).count()) * (rate_ - 1.0);
  return base_ + Duration(static_cast<int64_t>(gained));
}

std::string FakeClockModel::ControlLine(MonoTime process_start) const {
  return FaketimeControlLine(OffsetAt(process_start), rate_);
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

NodeClocks::NodeClocks(std::string libfaketime, std::string dir, int nodes)
    : libfaketime_(std::move(libfaketime)), dir_(std::move(dir)), nodes_(static_cast<size_t>(nodes)) {}

std::string NodeClocks::ControlPath(int i) const { return dir_ + "/node-" + std::to_string(i) + ".faketime"; }

std::vector<std::string> NodeClocks::Env(int i) const {
  std::string preload = libfaketime_;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing != nullptr && *existing != '\0') {
    preload += std::string(":") + existing;
  }
  std::string asan = "verify_asan_link_order=0";  // sanitizer builds: libfaketime loads first
  if (const char* existing = std::getenv("ASAN_OPTIONS"); existing != nullptr && *existing != '\0') {
    asan = std::string(existing) + ":" + asan;
  }
  return {"LD_PRELOAD=" + preload,
          "FAKETIME_TIMESTAMP_FILE=" + ControlPath(i),
          "FAKETIME_NO_CACHE=1",  // every clock read rereads the file: a rewrite acts at once
          "FAKETIME_DONT_FAKE_MONOTONIC=1",
          "ASAN_OPTIONS=" + asan};
}

Status NodeClocks::ProcessStarting(int i, MonoTime now) {
  nodes_[static_cast<size_t>(i)].process_start = now;
  return Write(i);
}

Status NodeClocks::Jump(int i, MonoTime now, Duration by) {
  nodes_[static_cast<size_t>(i)].model.Jump(now, by);
  return Write(i);
}

Status NodeClocks::SetDriftPpm(int i, MonoTime now, double ppm) {
  nodes_[static_cast<size_t>(i)].model.SetRate(now, 1.0 + ppm / 1e6);
  return Write(i);
}

Status NodeClocks::Write(int i) const {
  const Node& n = nodes_[static_cast<size_t>(i)];
  return WriteFileAtomically(ControlPath(i), "# kvchaos run: node-" + std::to_string(i) +
                                                 "'s clock (libfaketime: offset since its start, rate)\n" +
                                                 n.model.ControlLine(n.process_start) + "\n");
}

}  // namespace kvchaos::harness::real
