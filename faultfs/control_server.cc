// Unix-socket JSON-lines server and client; see control_server.h.
#include "faultfs/control_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>

#include <spdlog/spdlog.h>

#include "core/common/json_text.h"
#include "core/common/thread_util.h"

namespace kvchaos::faultfs {
namespace {

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

// Blocking send of all of `data` (the client side).
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

std::string ErrorLine(const std::string& message) {
  return DumpJson({{"ok", false}, {"error", message}}) + "\n";
}

}  // namespace

struct ControlServer::Client {
  int fd = -1;
  std::string in;       // received past the last answered line
  std::string out;      // replies not yet taken by the client
  bool closing = false;  // no more requests: close once `out` is sent
};

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
  // Bind under a temporary name, restrict it to the owner, listen, then rename: the socket never
  // exists under its name without accepting (clients waiting for the file would get
  // ECONNREFUSED), and nobody else can connect between the bind and the chmod (connecting to a
  // socket that does not listen yet is refused).
  const std::string tmp_path = path + ".tmp";
  Result<sockaddr_un> tmp_addr = SocketAddress(tmp_path);
  if (!tmp_addr.ok()) return tmp_addr.status();
  unlink(tmp_path.c_str());
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) return Status::IoError("control socket", errno);
  if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&*tmp_addr), sizeof(*tmp_addr)) != 0 ||
      chmod(tmp_path.c_str(), 0600) != 0 || listen(listen_fd_, SOMAXCONN) != 0 ||
      rename(tmp_path.c_str(), path.c_str()) != 0) {
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

void ControlServer::Accept(std::vector<Client>& clients) {
  while (true) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) spdlog::warn("control socket accept: {}", ErrnoText(errno));
      return;
    }
    if (clients.size() >= kMaxClients) {
      // Best effort: a fresh socket's buffer takes one short line without blocking.
      const std::string line = ErrorLine("too many control clients (" + std::to_string(kMaxClients) +
                                         " connected); try again once one has closed");
      (void)!send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      close(fd);
      continue;
    }
    clients.push_back(Client{fd, {}, {}, false});
  }
}

void ControlServer::Answer(Client& client) {
  size_t nl;
  while (client.out.size() < kMaxPendingReplyBytes && (nl = client.in.find('\n')) != std::string::npos) {
    const std::string line = client.in.substr(0, nl);
    client.in.erase(0, nl + 1);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    client.out += DumpJson(commands_.Handle(line)) + "\n";
  }
  if (client.in.size() > kMaxLineBytes && client.in.find('\n') == std::string::npos) {
    client.out += ErrorLine("request line longer than 1 MiB");
    client.in.clear();
    client.closing = true;
  }
}

void ControlServer::Loop() {
  std::vector<Client> clients;
  while (true) {
    std::vector<pollfd> fds = {{wake_fd_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const Client& c : clients) {
      short events = 0;
      if (!c.closing && c.out.size() < kMaxPendingReplyBytes) events |= POLLIN;
      if (!c.out.empty()) events |= POLLOUT;
      fds.push_back({c.fd, events, 0});
    }
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("control socket poll failed: {}", ErrnoText(errno));
      break;
    }
    if (fds[0].revents != 0) break;
    for (size_t i = 0; i < clients.size(); ++i) {
      Client& c = clients[i];
      const short revents = fds[i + 2].revents;
      bool drop = false;
      if (revents & POLLIN) {
        char chunk[4096];
        const ssize_t n = recv(c.fd, chunk, sizeof(chunk), 0);
        if (n > 0) {
          c.in.append(chunk, static_cast<size_t>(n));
        } else if (n == 0) {
          c.closing = true;  // the client is done sending; it may still read what it asked for
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          drop = true;
        }
      }
      if (!drop) Answer(c);
      if (!drop && !c.out.empty() && (revents & (POLLOUT | POLLIN)) != 0) {
        const ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
          c.out.erase(0, static_cast<size_t>(n));
          Answer(c);  // room again for replies to lines held back
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          drop = true;
        }
      }
      if ((revents & (POLLERR | POLLNVAL)) != 0 || ((revents & POLLHUP) != 0 && !(revents & POLLIN))) drop = true;
      if (c.closing && c.out.empty()) drop = true;
      if (drop) {
        close(c.fd);
        c.fd = -1;
      }
    }
    std::erase_if(clients, [](const Client& c) { return c.fd < 0; });
    if (fds[1].revents & POLLIN) Accept(clients);
  }
  for (const Client& c : clients) close(c.fd);
}

Result<std::string> ControlRequest(const std::string& path, const std::string& line,
                                   std::chrono::milliseconds timeout) {
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
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (reply.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    const int ready = left.count() > 0 ? poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      close(fd);
      return Status::Timeout("control socket '" + path + "': no reply within " + std::to_string(timeout.count()) + " ms");
    }
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
