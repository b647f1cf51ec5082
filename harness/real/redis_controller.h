// RedisController: one real redis-server of a real-mode run (the meta indexer's, or the
// coordination backend's), on a loopback port, with its working directory (log, any persistence
// file) inside the run directory.
//
// Faults: Kill + Start (a Redis that comes back without its data: locks, fencing counters and the
// meta index are gone, and the invariants say what that costs). An outage that keeps the data is
// applied by the nodes' proxies (LinkProxy::Sever), not here.
#pragma once

#include <string>

#include "core/common/status.h"
#include "harness/real/child_process.h"

namespace kvchaos::harness::real {

// The redis-server executable: PATH, then /usr/bin and /usr/local/bin; "" when absent.
std::string FindRedisServer();

class RedisController {
 public:
  // `dir`: the server's working directory (created); `port`: a free loopback port.
  RedisController(std::string binary, std::string dir, int port);

  // Starts the server (empty) and waits until it answers PING, up to `timeout`.
  Status Start(Duration timeout);
  void Kill() { child_.Kill(); }
  bool Running() { return child_.Running(); }

  int port() const { return port_; }
  std::string uri() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  const std::string& log_path() const { return child_.log_path(); }

 private:
  std::string dir_;
  int port_;
  ChildProcess child_;
};

// One PING over a fresh connection; true when +PONG came back within `timeout`.
bool RedisAnswersPing(int port, Duration timeout);

}  // namespace kvchaos::harness::real
