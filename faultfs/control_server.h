// ControlServer: serves the control protocol (control_commands.h) on a Unix socket while faultfs
// is mounted. One thread named "faultfs_ctl" polls the listening socket and every client; each
// complete line gets one reply line.
//
// No client can hold up another or shutdown: sockets are non-blocking, replies wait in a
// per-client buffer, and a client stops being read while its unread replies pass a bound (so one
// that never reads only stalls itself). Lines, clients and buffers are bounded, so no client can
// grow memory without limit. The socket is created mode 0600: rules can break the mount, so only
// its owner may send them.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/common/status.h"
#include "faultfs/control_commands.h"

namespace kvchaos::faultfs {

class ControlServer {
 public:
  static constexpr size_t kMaxLineBytes = 1 << 20;
  // Past this many bytes of unread replies a client's requests are left unread until it reads.
  static constexpr size_t kMaxPendingReplyBytes = 64 << 10;
  // Clients past this are answered with an error and closed.
  static constexpr size_t kMaxClients = 64;

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
  struct Client;
  void Loop();
  void Accept(std::vector<Client>& clients);
  // Answers the complete lines `client` has sent while its reply buffer has room.
  void Answer(Client& client);

  ControlCommands& commands_;
  std::string path_;
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};
  std::thread thread_;
};

// Sends one request line to the socket at `path` and returns the reply line; Timeout when none
// came within `timeout` (a command such as crash may take a while, a dead server forever).
Result<std::string> ControlRequest(const std::string& path, const std::string& line,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace kvchaos::faultfs
