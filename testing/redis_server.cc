#include "testing/redis_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "testing/free_port.h"

namespace kvchaos::testing {
namespace {

std::string FindRedisServer() { return FindExecutable({"/usr/bin/redis-server", "/usr/local/bin/redis-server"}); }

bool Answers(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  if (ok) {
    const char ping[] = "PING\r\n";
    char reply[16] = {};
    ok = write(fd, ping, sizeof(ping) - 1) == static_cast<ssize_t>(sizeof(ping) - 1) && read(fd, reply, 7) > 0 &&
         std::string(reply).rfind("+PONG", 0) == 0;
  }
  close(fd);
  return ok;
}

}  // namespace

std::string RedisServer::SkipReason() {
  return "redis-server is not installed (ci/install-deps.sh installs it); looked in /usr/bin and /usr/local/bin";
}

std::unique_ptr<RedisServer> RedisServer::Start() {
  if (FindRedisServer().empty()) return nullptr;
  std::unique_ptr<RedisServer> server(new RedisServer());
  for (int attempt = 0; attempt < 5; ++attempt) {
    server->port_ = PickFreeLoopbackPort();
    try {
      server->Launch();
      return server;
    } catch (const std::exception&) {
      if (attempt == 4) throw;  // the port may have been taken in between: try another
    }
  }
  return nullptr;
}

void RedisServer::Launch() {
  const std::string port = std::to_string(port_);
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{FindRedisServer(), "--port", port, "--bind", "127.0.0.1", "--dir", dir_.str(), "--save",
                               "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"},
      dir_.str() + "/redis.log");
  for (int i = 0; i < 500; ++i) {
    if (Answers(port_)) return;
    if (process_->Exited()) {
      throw std::runtime_error("redis-server exited at start on port " + port + " (see its log in " + dir_.str() + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  process_->Kill();
  throw std::runtime_error("redis-server did not answer PING on port " + port + " within 5 s");
}

void RedisServer::Pause() { process_->Pause(); }
void RedisServer::Resume() { process_->Resume(); }

void RedisServer::Restart() {
  process_->Kill();
  Launch();
}

RedisServer::~RedisServer() = default;

}  // namespace kvchaos::testing
