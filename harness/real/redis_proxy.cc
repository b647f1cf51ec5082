// The partition proxy between a node and Redis; see redis_proxy.h.
#include "harness/real/redis_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/common/thread_util.h"

namespace kvchaos::harness::real {
namespace {

void NonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// One relayed connection: node side and Redis side, with the bytes read but not yet written.
struct Pipe {
  int node = -1;
  int redis = -1;
  std::string to_redis;
  std::string to_node;
  bool closed = false;
  bool dead = false;  // severed by an outage: what it carries is discarded
};

int ConnectUpstream(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  NonBlocking(fd);
  return fd;
}

// Moves what `from` has into `buffer`; false when the peer closed or failed.
bool ReadInto(int from, std::string& buffer) {
  char chunk[65536];
  const ssize_t n = ::read(from, chunk, sizeof chunk);
  if (n > 0) {
    buffer.append(chunk, static_cast<size_t>(n));
    return true;
  }
  return n < 0 && (errno == EAGAIN || errno == EINTR);
}

// Reads and drops what `from` has; false when the peer closed or failed.
bool Discard(int from) {
  std::string ignored;
  return ReadInto(from, ignored);
}

// Writes what it can of `buffer` to `to`; false on a failed peer.
bool WriteFrom(int to, std::string& buffer) {
  const ssize_t n = ::send(to, buffer.data(), buffer.size(), MSG_NOSIGNAL);
  if (n > 0) {
    buffer.erase(0, static_cast<size_t>(n));
    return true;
  }
  return n < 0 && (errno == EAGAIN || errno == EINTR);
}

}  // namespace

RedisProxy::RedisProxy(std::string name, int upstream_port) : name_(std::move(name)), upstream_port_(upstream_port) {}

RedisProxy::~RedisProxy() { Stop(); }

Status RedisProxy::Start() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return Status::IoError("proxy socket: " + std::string(std::strerror(errno)), errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    listen_fd_ = -1;
    return Status::IoError("proxy " + name_ + ": bind/listen on 127.0.0.1: " + std::strerror(err), err);
  }
  port_ = ntohs(addr.sin_port);
  NonBlocking(listen_fd_);
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    listen_fd_ = -1;
    return Status::IoError("proxy " + name_ + ": pipe: " + std::strerror(err), err);
  }
  wake_read_ = wake[0];
  wake_write_ = wake[1];
  thread_ = std::thread([this] {
    SetCurrentThreadName("kvc_px_" + name_);
    Loop();
  });
  return Status::Ok();
}

void RedisProxy::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
  for (int* fd : {&wake_read_, &wake_write_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void RedisProxy::Block(bool outbound, bool inbound) {
  block_out_ = outbound;
  block_in_ = inbound;
  Wake();
}

void RedisProxy::Sever(bool on) {
  sever_ = on;
  Wake();
}

void RedisProxy::Wake() {
  if (wake_write_ < 0) return;
  const char one = 1;
  (void)::write(wake_write_, &one, 1);  // a full pipe already wakes the relay
}

void RedisProxy::Loop() {
  std::vector<Pipe> pipes;
  while (!stop_) {
    const bool blocked_out = block_out_;
    const bool blocked_in = block_in_;
    const bool sever = sever_;
    const bool out_open = !blocked_out;
    const bool in_open = !blocked_in;
    if (sever) {
      for (Pipe& p : pipes) {
        p.dead = true;
        p.to_redis.clear();  // in flight: lost
        p.to_node.clear();
      }
    }
    std::vector<pollfd> fds;
    fds.push_back({listen_fd_, POLLIN, 0});
    fds.push_back({wake_read_, POLLIN, 0});
    for (const Pipe& p : pipes) {
      if (p.dead) {
        fds.push_back({p.node, POLLIN, 0});
        fds.push_back({p.redis, POLLIN, 0});
        continue;
      }
      short node_events = 0;
      short redis_events = 0;
      if (out_open && p.to_redis.empty()) node_events |= POLLIN;
      if (in_open && !p.to_node.empty()) node_events |= POLLOUT;
      if (in_open && p.to_node.empty()) redis_events |= POLLIN;
      if (out_open && !p.to_redis.empty()) redis_events |= POLLOUT;
      // A socket with nothing to watch is left out (fd -1): poll would report its hang-up at
      // once, over and over, while a partition holds that direction.
      fds.push_back({node_events != 0 ? p.node : -1, node_events, 0});
      fds.push_back({redis_events != 0 ? p.redis : -1, redis_events, 0});
    }
    // Changes of the partition wake the poll; the timeout is for Stop().
    if (::poll(fds.data(), fds.size(), 20) < 0 && errno != EINTR) break;
    if (fds[1].revents & POLLIN) {
      char drained[64];
      while (::read(wake_read_, drained, sizeof drained) > 0) {
      }
      // A change since this round began: start the next round with it, before relaying anything.
      if (block_out_ != blocked_out || block_in_ != blocked_in || sever_ != sever) continue;
    }
    if (fds[0].revents & POLLIN) {
      for (int client; (client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0;) {
        const int upstream = ConnectUpstream(upstream_port_);
        if (upstream < 0) {
          ::close(client);  // Redis is down (a wipe in progress): the node sees a refused call
          continue;
        }
        const int one = 1;
        ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pipes.push_back(Pipe{client, upstream, {}, {}, false, sever_.load()});
      }
    }
    for (size_t i = 0; i < pipes.size() && 2 + 2 * i + 1 < fds.size(); ++i) {
      Pipe& p = pipes[i];
      const pollfd& n = fds[2 + 2 * i];
      const pollfd& r = fds[3 + 2 * i];
      bool ok = true;
      if (p.dead) {
        if (n.revents & (POLLIN | POLLHUP | POLLERR)) ok = Discard(p.node);
        if (ok && (r.revents & (POLLIN | POLLHUP | POLLERR))) ok = Discard(p.redis);
        p.closed = !ok;
        continue;
      }
      // A hang-up is acted on only once the direction it affects is open again: a partitioned
      // node's close must not reach Redis (nor Redis's the node) before the heal.
      if (ok && (n.revents & (POLLIN | POLLHUP | POLLERR)) && out_open) ok = ReadInto(p.node, p.to_redis);
      if (ok && (r.revents & (POLLIN | POLLHUP | POLLERR)) && in_open) ok = ReadInto(p.redis, p.to_node);
      if (ok && (n.revents & POLLOUT)) ok = WriteFrom(p.node, p.to_node);
      if (ok && (r.revents & POLLOUT)) ok = WriteFrom(p.redis, p.to_redis);
      p.closed = !ok;
    }
    for (Pipe& p : pipes) {
      if (!p.closed) continue;
      ::close(p.node);
      ::close(p.redis);
    }
    std::erase_if(pipes, [](const Pipe& p) { return p.closed; });
  }
  for (Pipe& p : pipes) {
    ::close(p.node);
    ::close(p.redis);
  }
}

}  // namespace kvchaos::harness::real
