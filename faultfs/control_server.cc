// Unix-socket JSON-lines server and client; see control_server.h.
#include "faultfs/control_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include <spdlog/spdlog.h>

#include "core/common/thread_util.h"

namespace kvchaos::faultfs {
namespace {

constexpr size_t kMaxLine = 1 << 20;

Result<sockaddr_un> SocketAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("control socket path '" + path + "' must be 1.." +
                                   std::to_string(sizeof(addr.sun_path) - 1) + " characters");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

bool SendAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

ControlServer::~ControlServer() { Stop(); }

Status ControlServer::Start(const std::string& path) {
  KVCHAOS_RETURN_IF_ERROR(Listen(path));
  Serve();
  return Status::Ok();
}

Status ControlServer::Listen(const std::string& path) {
  Result<sockaddr_un> addr = SocketAddress(path);
  if (!addr.ok()) return addr.status();
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return Status::InvalidArgument("control path '" + path + "' exists and is not a socket");
    unlink(path.c_str());
  }
  // Bind under a temporary name and rename once listening, so that the socket never exists
  // without accepting (clients that wait for the file would get ECONNREFUSED).
  const std::string tmp_path = path + ".tmp";
  Result<sockaddr_un> tmp_addr = SocketAddress(tmp_path);
  if (!tmp_addr.ok()) return tmp_addr.status();
  unlink(tmp_path.c_str());
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return Status::IoError("control socket", errno);
  if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&*tmp_addr), sizeof(*tmp_addr)) != 0 ||
      listen(listen_fd_, 16) != 0 || rename(tmp_path.c_str(), path.c_str()) != 0) {
    const int err = errno;
    close(listen_fd_);
    listen_fd_ = -1;
    unlink(tmp_path.c_str());
    return Status::IoError("cannot listen on control socket '" + path + "'", err);
  }
  path_ = path;
  if (pipe2(wake_fd_, O_CLOEXEC) != 0) return Status::IoError("pipe", errno);
  return Status::Ok();
}

void ControlServer::Serve() {
  if (listen_fd_ < 0 || thread_.joinable()) return;
  thread_ = std::thread([this] {
    SetCurrentThreadName("faultfs_ctl");
    Loop();
  });
}

void ControlServer::Stop() {
  if (thread_.joinable()) {
    const char byte = 1;
    (void)!write(wake_fd_[1], &byte, 1);
    thread_.join();
  }
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    listen_fd_ = -1;
    unlink(path_.c_str());
  }
  for (int& fd : wake_fd_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

void ControlServer::Loop() {
  std::map<int, std::string> clients;  // fd → bytes received past the last full line
  while (true) {
    std::vector<pollfd> fds = {{wake_fd_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const auto& [fd, buf] : clients) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("control socket poll failed: {}", ErrnoText(errno));
      break;
    }
    if (fds[0].revents != 0) break;
    if (fds[1].revents & POLLIN) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) clients[fd];
    }
    for (size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const int fd = fds[i].fd;
      char chunk[4096];
      const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) {
        close(fd);
        clients.erase(fd);
        continue;
      }
      std::string& buf = clients[fd];
      buf.append(chunk, static_cast<size_t>(n));
      bool drop = false;
      size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        const std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        if (!SendAll(fd, commands_.Handle(line).dump() + "\n")) {
          drop = true;
          break;
        }
      }
      if (!drop && buf.size() > kMaxLine) {
        SendAll(fd, nlohmann::json{{"ok", false}, {"error", "request line longer than 1 MiB"}}.dump() + "\n");
        drop = true;
      }
      if (drop) {
        close(fd);
        clients.erase(fd);
      }
    }
  }
  for (const auto& [fd, buf] : clients) close(fd);
}

Result<std::string> ControlRequest(const std::string& path, const std::string& line) {
  Result<sockaddr_un> addr = SocketAddress(path);
  if (!addr.ok()) return addr.status();
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError("socket", errno);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    const int err = errno;
    close(fd);
    return Status::IoError("cannot connect to control socket '" + path + "'", err);
  }
  std::string request = line;
  if (request.empty() || request.back() != '\n') request += '\n';
  if (!SendAll(fd, request)) {
    const int err = errno;
    close(fd);
    return Status::IoError("send to '" + path + "'", err);
  }
  std::string reply;
  char chunk[4096];
  while (reply.find('\n') == std::string::npos) {
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(chunk, static_cast<size_t>(n));
  }
  close(fd);
  const size_t nl = reply.find('\n');
  if (nl == std::string::npos) return Status::Unavailable("control socket '" + path + "' closed without a reply");
  return reply.substr(0, nl);
}

}  // namespace kvchaos::faultfs
