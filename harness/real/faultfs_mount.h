// FaultfsMount: one faultfs mount of a real-mode run — a store backend that sits on faultfs. The
// faultfs process runs in the foreground as a child of the runner (its death signal is SIGTERM,
// on which faultfs releases hung calls and unmounts), rules come and go through its JSON-lines
// control socket, and Unmount always leaves the mount point unmounted: release hung calls, SIGTERM,
// then `fusermount3 -u`, then a lazy `fusermount3 -uz` as the last resort.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/common/status.h"
#include "harness/real/child_process.h"

namespace kvchaos::harness::real {

// Where `kvchaos run` looks for the faultfs binary, in order: `explicit_path` (--faultfs), the
// environment variable KVCHAOS_FAULTFS, next to the running kvchaos binary in a build tree
// (<build>/tools/kvchaos/kvchaos -> <build>/faultfs/faultfs) or an install tree (bin/faultfs).
// NotFound names every place it looked.
Result<std::string> FindFaultfs(const std::string& explicit_path);

// True when `path` is a mount point in /proc/self/mountinfo.
bool IsMountPoint(const std::string& path);

// What is missing for FUSE mounts on this machine ("" when /dev/fuse and fusermount3 are there).
std::string FuseUnavailableReason();

struct FaultfsMountSpec {
  std::string name;        // the backend name
  std::string binary;      // faultfs
  std::string source;      // the directory mirrored
  std::string mountpoint;  // created when missing
  std::string control;     // control socket path
  std::string fault_log;   // JSONL of injected faults
  std::string log_path;    // faultfs's own stdout/stderr
  uint64_t seed = 0;
};

class FaultfsMount {
 public:
  explicit FaultfsMount(FaultfsMountSpec spec);
  ~FaultfsMount();  // Unmount()
  FaultfsMount(const FaultfsMount&) = delete;
  FaultfsMount& operator=(const FaultfsMount&) = delete;

  // Starts faultfs and waits until the mount is visible and the control socket answers.
  Status Mount(Duration timeout);
  // One control request; the reply object, or an error when the socket fails or the reply says
  // {"ok":false}.
  Result<nlohmann::json> Control(const nlohmann::json& request);
  // Releases hung calls, stops faultfs and makes sure the mount point is unmounted. Idempotent.
  void Unmount();

  const std::string& mountpoint() const { return spec_.mountpoint; }
  const std::string& log_path() const { return spec_.log_path; }
  const std::string& name() const { return spec_.name; }

 private:
  FaultfsMountSpec spec_;
  ChildProcess child_;
};

}  // namespace kvchaos::harness::real
