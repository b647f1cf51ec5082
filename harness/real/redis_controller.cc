// The real-mode redis-server; see redis_controller.h.
#include "harness/real/redis_controller.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

namespace kvchaos::harness::real {

std::string FindRedisServer() { return FindProgram("redis-server"); }

bool RedisAnswersPing(int port, Duration timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (ok) {
    const char ping[] = "PING\r\n";
    ok = ::write(fd, ping, sizeof ping - 1) == static_cast<ssize_t>(sizeof ping - 1);
  }
  if (ok) {
    pollfd p{fd, POLLIN, 0};
    ok = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, ToMillis(timeout)))) == 1;
  }
  if (ok) {
    char reply[8] = {};
    ok = ::read(fd, reply, 5) == 5 && std::string(reply, 5) == "+PONG";
  }
  ::close(fd);
  return ok;
}

namespace {

ChildSpec RedisSpec(const std::string& binary, const std::string& dir, int port) {
  ChildSpec spec;
  spec.name = "redis-server (" + std::filesystem::path(dir).filename().string() + ")";
  spec.log_path = dir + "/redis.log";
  // No persistence at all: a restart is empty by design (see the header); --dir keeps any file
  // redis might still write inside the run directory.
  spec.argv = {binary, "--port", std::to_string(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
               "--appendonly", "no", "--daemonize", "no", "--loglevel", "notice", "--protected-mode", "no"};
  return spec;
}

}  // namespace

RedisController::RedisController(std::string binary, std::string dir, int port)
    : dir_(std::move(dir)), port_(port), child_(RedisSpec(binary, dir_, port_)) {}

Status RedisController::Start(Duration timeout) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return Status::IoError("redis dir " + dir_ + ": " + ec.message(), ec.value());
  if (Status s = child_.Start(); !s.ok()) return s;
  Runtime& rt = Runtime::Real();
  const MonoTime deadline = rt.Now() + timeout;
  while (rt.Now() < deadline) {
    if (RedisAnswersPing(port_, std::chrono::milliseconds(200))) return Status::Ok();
    if (StopRequested()) {
      child_.Kill();
      return Interrupted("waiting for " + child_.name());
    }
    if (!child_.Running()) {
      return Status::Unavailable(child_.name() + " on port " + std::to_string(port_) + " " + child_.ExitDescription() +
                                 " at start (log: " + child_.log_path() + ")");
    }
    rt.SleepFor(std::chrono::milliseconds(20));
  }
  child_.Kill();
  return Status::Timeout(child_.name() + " did not answer PING on port " + std::to_string(port_) + " within " +
                         std::to_string(ToMillis(timeout)) + " ms (log: " + child_.log_path() + ")");
}

}  // namespace kvchaos::harness::real
