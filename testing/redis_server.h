// A real redis-server for tests: started on a free 127.0.0.1 port with its data in a temp dir,
// killed (and its files removed) when the object goes away, even when the test fails.
//
//   auto redis = RedisServer::Start();
//   if (!redis) GTEST_SKIP() << RedisServer::SkipReason();   // only when redis-server is absent
//   Connect to 127.0.0.1:redis->port() ...
#pragma once

#include <memory>
#include <string>

#include "testing/child_process.h"
#include "testing/temp_dir.h"

namespace kvchaos::testing {

class RedisServer {
 public:
  // nullptr when redis-server is not installed; throws when it is installed but will not start.
  static std::unique_ptr<RedisServer> Start();
  // Why Start() returned nullptr, for GTEST_SKIP.
  static std::string SkipReason();
  ~RedisServer();

  int port() const { return port_; }
  std::string uri() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  // SIGSTOP / SIGCONT: the server stops answering while its sockets stay open (an outage).
  void Pause();
  void Resume();
  // Kills and restarts the server on the same port and data dir (data kept only if persisted).
  void Restart();

 private:
  RedisServer() = default;
  void Launch();

  TempDir dir_{"kvchaos-redis"};
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace kvchaos::testing
