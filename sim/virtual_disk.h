// VirtualDisk: the world of a store unit test on virtual time — one host on a SimRuntime, a
// simulated disk whose mounts are the store's paths (each its own storage, or all reaching one
// shared storage, as access paths to one file system do), and faultfs rules per mount. A
// PosixStore given Deps() runs its engines, timeouts and health monitor on virtual time, so a
// test of an attempt timeout, a hung write or a probe interval takes microseconds and replays.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/store/posix_store.h"
#include "sim/sim_disk.h"
#include "sim/virtual_time.h"

namespace kvchaos::sim {

class VirtualDisk {
 public:
  // `paths` mounts named /sim/p0, /sim/p1, ...; shared: all reach one storage.
  VirtualDisk(int paths, bool shared, uint64_t seed = 1);

  // What a PosixStore needs to run on this disk and runtime.
  store::PosixStoreDeps Deps();
  const std::vector<std::string>& paths() const { return paths_; }
  const std::string& path(int i) const { return paths_.at(static_cast<size_t>(i)); }

  // A faultfs rule (YAML flow text, as `faultfs ctl add` takes) on a mount; and its removal.
  Status AddRule(int path, const std::string& yaml);
  Status RemoveRule(int path, const std::string& id);

  // Names in the storage behind a mount, recursively, relative to it ("0a3/<hex>", ...), sorted.
  std::vector<std::string> Files(int path);

  // RunOnVirtualTime on this disk's runtime.
  std::string Run(const std::function<void()>& body, Duration limit = std::chrono::hours(1)) {
    return RunOnVirtualTime(runtime_, body, limit);
  }

  SimRuntime& runtime() { return runtime_; }
  SimDisk& disk() { return disk_; }
  SimFileOps& files() { return files_; }

 private:
  SimRuntime runtime_;
  SimDisk disk_;
  SimFileOps files_;
  SimAioOps aio_;
  std::vector<std::string> paths_;
  uint64_t seed_;
};

}  // namespace kvchaos::sim
