// A real faultfs mount for tests: starts the faultfs binary (-f) on fresh temp dirs, waits until
// the mount is live, and always unmounts and reaps it on destruction (SIGTERM, then
// fusermount3 -u -z and SIGKILL if it does not go). When the test process dies without that (a
// ctest timeout's SIGKILL), faultfs gets SIGTERM from the kernel (PR_SET_PDEATHSIG) and unmounts:
// no mount is left behind. The signal comes when the thread that called Start exits, so call
// Start from the test's own thread. Tests skip when /dev/fuse or fusermount3 is missing.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "testing/temp_dir.h"

namespace kvchaos::faultfs::testing {

struct MountOptions {
  std::string rules_yaml;  // written to a file and passed as --rules when not empty
  std::optional<uint64_t> seed;
  std::string cache = "targeted";
  std::string source;      // default: a fresh temp dir
};

// Why mount tests cannot run here, or "" when they can.
std::string FuseSkipReason();

class FaultFsMount {
 public:
  FaultFsMount();
  ~FaultFsMount();
  FaultFsMount(const FaultFsMount&) = delete;
  FaultFsMount& operator=(const FaultFsMount&) = delete;

  Status Start(const MountOptions& options = {});
  // Stops faultfs with `sig` and waits for it; returns its exit status (or -1).
  int Stop(int sig = 15);
  // Waits for faultfs to exit by itself (after fusermount3 -u, say); its status, or -1 on timeout.
  int WaitExited(std::chrono::milliseconds timeout);
  bool Mounted() const;
  pid_t pid() const { return pid_; }

  const std::string& source() const { return source_; }
  const std::string& mnt() const { return mnt_; }
  const std::string& socket() const { return socket_; }
  std::string src(const std::string& rel) const { return source_ + "/" + rel; }
  std::string at(const std::string& rel) const { return mnt_ + "/" + rel; }

  // Sends one control request; the reply object (or an IoError when unreachable).
  Result<nlohmann::json> Ctl(const nlohmann::json& request) const;
  // Adds one rule from JSON; fails the calling test's expectations through the Status.
  Status AddRule(const nlohmann::json& rule) const;
  // The fault log's lines, parsed.
  std::vector<nlohmann::json> LogLines() const;
  std::string Stderr() const;

 private:
  std::unique_ptr<kvchaos::testing::TempDir> dir_;
  std::string source_, mnt_, socket_, log_, stderr_;
  pid_t pid_ = -1;
};

// Whole-file helpers on real paths.
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& data);
// True when `path` is a mount point of this mount namespace.
bool IsMountPoint(const std::string& path);
// Runs a shell command line; its exit status and its stdout and stderr together.
std::pair<int, std::string> Shell(const std::string& cmd);

}  // namespace kvchaos::faultfs::testing
