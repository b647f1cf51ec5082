#include "testing/redis_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "testing/free_port.h"

namespace kvchaos::testing {
namespace {

const char* kCandidates[] = {"/usr/bin/redis-server", "/usr/local/bin/redis-server"};

std::string FindRedisServer() {
  for (const char* path : kCandidates) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

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
  const std::string binary = FindRedisServer();
  const std::string port = std::to_string(port_);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    execl(binary.c_str(), binary.c_str(), "--port", port.c_str(), "--bind", "127.0.0.1", "--dir",
          dir_.str().c_str(), "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
          "--logfile", (dir_.str() + "/redis.log").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 500; ++i) {
    if (Answers(port_)) return;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("redis-server exited at start on port " + port + " (see its log in " + dir_.str() + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Kill();
  throw std::runtime_error("redis-server did not answer PING on port " + port + " within 5 s");
}

void RedisServer::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGCONT);
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void RedisServer::Pause() { kill(pid_, SIGSTOP); }
void RedisServer::Resume() { kill(pid_, SIGCONT); }

void RedisServer::Restart() {
  Kill();
  Launch();
}

RedisServer::~RedisServer() { Kill(); }

}  // namespace kvchaos::testing
