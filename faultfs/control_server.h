// ControlServer: serves the control protocol (control_commands.h) on a Unix socket while faultfs
// is mounted. One thread named "faultfs_ctl" polls the listening socket and every client; each
// complete line gets one reply line. Lines are bounded (1 MiB) so a client cannot grow memory.
#pragma once

#include <string>
#include <thread>

#include "core/common/status.h"
#include "faultfs/control_commands.h"

namespace kvchaos::faultfs {

class ControlServer {
 public:
  explicit ControlServer(ControlCommands& commands) : commands_(commands) {}
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Binds `path` (replacing a stale socket file) and listens; clients queue until Serve().
  // faultfs listens before it daemonizes, so a bad path is reported to the shell that started it.
  Status Listen(const std::string& path);
  // Starts the serving thread (after the fork: threads do not survive one).
  void Serve();
  // Listen() then Serve().
  Status Start(const std::string& path);
  // Stops serving and removes the socket file.
  void Stop();

 private:
  void Loop();

  ControlCommands& commands_;
  std::string path_;
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};
  std::thread thread_;
};

// Sends one request line to the socket at `path` and returns the reply line.
Result<std::string> ControlRequest(const std::string& path, const std::string& line);

}  // namespace kvchaos::faultfs
