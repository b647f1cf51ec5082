// The fault proxy on one TCP path (a node to coordination, or clients to a node); see link_proxy.h.
#include "harness/real/link_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

#include "core/common/rng.h"
#include "core/common/thread_util.h"

namespace kvchaos::harness::real {
namespace {

void NonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Linux's minimum retransmission timeout: how long a lost segment keeps the stream waiting.
constexpr Duration kRetransmissionTimeout = std::chrono::milliseconds(200);
// Bytes a degraded direction holds at most before it stops reading (the sender then waits, as
// behind a full window).
constexpr size_t kMaxHeldBytes = 1 << 20;

// One direction of a connection: bytes ready to write, and bytes a degraded link still holds.
struct Direction {
  struct Held {
    MonoTime release;
    std::string bytes;
  };
  std::string ready;
  std::deque<Held> held;
  size_t held_bytes = 0;

  bool CanRead() const { return ready.empty() && held_bytes < kMaxHeldBytes; }
  void Clear() {
    ready.clear();
    held.clear();
    held_bytes = 0;
  }
  // What a read brought: ready at once on a healthy link with nothing held, else after the delay
  // and any retransmission waits, never before what was read earlier. `sent_until` is the link's
  // (every connection's bytes share its bandwidth): when what it took so far has all gone out.
  void Add(std::string bytes, const LinkQuality& q, Rng& rng, MonoTime now, MonoTime& sent_until) {
    if (!q.degraded() && held.empty()) {
      ready += bytes;
      return;
    }
    Duration wait = q.delay;
    if (q.jitter > Duration::zero()) wait += Duration(rng.UniformInt(0, q.jitter.count()));
    for (Duration rto = kRetransmissionTimeout; q.loss > 0 && rng.Bernoulli(q.loss) && rto <= std::chrono::seconds(60);
         rto *= 2) {
      wait += rto;
    }
    MonoTime sent = now;
    if (q.bandwidth > 0) {
      sent_until = std::max(sent_until, now) +
                   Duration(static_cast<int64_t>(static_cast<double>(bytes.size()) * 1e9 / static_cast<double>(q.bandwidth)));
      sent = sent_until;
    }
    MonoTime release = sent + wait;
    if (!held.empty()) release = std::max(release, held.back().release);
    held_bytes += bytes.size();
    held.push_back(Held{release, std::move(bytes)});
  }
  // Moves what is due into `ready`; returns when the next held bytes are due (max() if none).
  MonoTime Release(MonoTime now) {
    while (!held.empty() && held.front().release <= now) {
      held_bytes -= held.front().bytes.size();
      ready += held.front().bytes;
      held.pop_front();
    }
    return held.empty() ? MonoTime::max() : held.front().release;
  }
};

// One relayed connection: the caller's side (a node calling Redis, a client calling a node) and
// the server's, with the bytes read but not yet written.
struct Pipe {
  int client = -1;
  int server = -1;
  Direction up;    // client -> server
  Direction down;  // server -> client
  bool closed = false;
  bool dead = false;  // severed by an outage: what it carries is discarded
  // The client closed while a degraded link still held its bytes: as on a real network, what it
  // sent before closing still arrives; the connection closes once that is delivered.
  bool client_gone = false;
  bool HoldsUpstream() const { return !up.ready.empty() || !up.held.empty(); }
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

// Closes with a TCP reset (RST) instead of an orderly FIN: the peer's next call fails with
// ECONNRESET.
void CloseWithReset(int fd) {
  const linger abort{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
  ::close(fd);
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

LinkProxy::LinkProxy(std::string name, int upstream_port) : name_(std::move(name)), upstream_port_(upstream_port) {}

LinkProxy::~LinkProxy() { Stop(); }

Status LinkProxy::Start() {
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

void LinkProxy::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
  for (int* fd : {&wake_read_, &wake_write_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void LinkProxy::Block(bool to_server, bool to_client) {
  block_out_ = to_server;
  block_in_ = to_client;
  Wake();
}

void LinkProxy::Heal() {
  Degrade(LinkQuality{}, LinkQuality{}, 0);
  reset_ = false;
  Block(false, false);
}

void LinkProxy::Degrade(LinkQuality to_server, LinkQuality to_client, uint64_t seed) {
  {
    std::lock_guard<std::mutex> lock(quality_mu_);
    quality_out_ = to_server;
    quality_in_ = to_client;
    quality_seed_ = seed;
    ++quality_version_;
  }
  Wake();
}

void LinkProxy::Sever(bool on) {
  sever_ = on;
  Wake();
}

void LinkProxy::Reset(bool on) {
  reset_ = on;
  Wake();
}

void LinkProxy::Wake() {
  if (wake_write_ < 0) return;
  const char one = 1;
  (void)::write(wake_write_, &one, 1);  // a full pipe already wakes the relay
}

void LinkProxy::Loop() {
  std::vector<Pipe> pipes;
  Runtime& rt = Runtime::Real();
  Rng rng(0);
  uint64_t seen_version = 0;
  LinkQuality out_quality;
  LinkQuality in_quality;
  MonoTime up_sent_until{};  // bandwidth caps are the link's, shared by its connections
  MonoTime down_sent_until{};
  while (!stop_) {
    {
      std::lock_guard<std::mutex> lock(quality_mu_);
      out_quality = quality_out_;
      in_quality = quality_in_;
      if (quality_version_ != seen_version) {
        seen_version = quality_version_;
        rng = Rng(quality_seed_);
      }
    }
    const MonoTime now = rt.Now();
    MonoTime next_release = MonoTime::max();
    for (Pipe& p : pipes) {
      next_release = std::min(next_release, p.up.Release(now));
      next_release = std::min(next_release, p.down.Release(now));
    }
    const bool blocked_out = block_out_;
    const bool blocked_in = block_in_;
    const bool sever = sever_;
    const bool reset = reset_;
    const bool out_open = !blocked_out;
    const bool in_open = !blocked_in;
    if (reset) {
      for (Pipe& p : pipes) {
        CloseWithReset(p.client);
        CloseWithReset(p.server);
      }
      pipes.clear();
    }
    if (sever) {
      for (Pipe& p : pipes) {
        p.dead = true;
        p.up.Clear();  // in flight: lost
        p.down.Clear();
      }
    }
    std::vector<pollfd> fds;
    fds.push_back({listen_fd_, POLLIN, 0});
    fds.push_back({wake_read_, POLLIN, 0});
    for (const Pipe& p : pipes) {
      if (p.dead) {
        fds.push_back({p.client, POLLIN, 0});
        fds.push_back({p.server, POLLIN, 0});
        continue;
      }
      short client_events = 0;
      short server_events = 0;
      if (p.client_gone) {
        fds.push_back({-1, 0, 0});
        fds.push_back({out_open && !p.up.ready.empty() ? p.server : -1, POLLOUT, 0});
        continue;
      }
      if (out_open && p.up.CanRead()) client_events |= POLLIN;
      if (in_open && !p.down.ready.empty()) client_events |= POLLOUT;
      if (in_open && p.down.CanRead()) server_events |= POLLIN;
      if (out_open && !p.up.ready.empty()) server_events |= POLLOUT;
      // A socket with nothing to watch is left out (fd -1): poll would report its hang-up at
      // once, over and over, while a partition holds that direction.
      fds.push_back({client_events != 0 ? p.client : -1, client_events, 0});
      fds.push_back({server_events != 0 ? p.server : -1, server_events, 0});
    }
    // Changes of the partition wake the poll; the timeout is for Stop() and held bytes coming due.
    int timeout_ms = 20;
    if (next_release != MonoTime::max()) {
      const auto due = std::chrono::ceil<std::chrono::milliseconds>(next_release - now).count();
      timeout_ms = static_cast<int>(std::clamp<int64_t>(due, 0, timeout_ms));
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) break;
    if (fds[1].revents & POLLIN) {
      char drained[64];
      while (::read(wake_read_, drained, sizeof drained) > 0) {
      }
      // A change since this round began: start the next round with it, before relaying anything.
      if (block_out_ != blocked_out || block_in_ != blocked_in || sever_ != sever || reset_ != reset ||
          quality_version_ != seen_version) {
        continue;
      }
    }
    if (fds[0].revents & POLLIN) {
      for (int client; (client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0;) {
        if (reset_) {
          CloseWithReset(client);
          continue;
        }
        const int upstream = ConnectUpstream(upstream_port_);
        if (upstream < 0) {
          ::close(client);  // the server is down (a Redis wipe, a crashed node): the call is refused
          continue;
        }
        const int one = 1;
        ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        Pipe pipe;
        pipe.client = client;
        pipe.server = upstream;
        pipe.dead = sever_.load();
        pipes.push_back(std::move(pipe));
      }
    }
    for (size_t i = 0; i < pipes.size() && 2 + 2 * i + 1 < fds.size(); ++i) {
      Pipe& p = pipes[i];
      const pollfd& client_poll = fds[2 + 2 * i];
      const pollfd& server_poll = fds[3 + 2 * i];
      bool ok = true;
      if (p.dead) {
        if (client_poll.revents & (POLLIN | POLLHUP | POLLERR)) ok = Discard(p.client);
        if (ok && (server_poll.revents & (POLLIN | POLLHUP | POLLERR))) ok = Discard(p.server);
        p.closed = !ok;
        continue;
      }
      // A hang-up is acted on only once the direction it affects is open again: a partitioned
      // client's close must not reach the server (nor the server's the client) before the heal.
      if (p.client_gone) {
        if (server_poll.revents & POLLOUT) ok = WriteFrom(p.server, p.up.ready);
        p.closed = !ok || !p.HoldsUpstream();
        continue;
      }
      const MonoTime read_at = rt.Now();
      std::string got;
      if (ok && (client_poll.revents & (POLLIN | POLLHUP | POLLERR)) && out_open) {
        ok = ReadInto(p.client, got);
        if (!got.empty()) p.up.Add(std::move(got), out_quality, rng, read_at, up_sent_until);
        if (!ok && p.HoldsUpstream()) {
          p.client_gone = true;  // deliver what it sent first
          continue;
        }
      }
      got.clear();
      if (ok && (server_poll.revents & (POLLIN | POLLHUP | POLLERR)) && in_open) {
        ok = ReadInto(p.server, got);
        if (!got.empty()) p.down.Add(std::move(got), in_quality, rng, read_at, down_sent_until);
      }
      if (ok && (client_poll.revents & POLLOUT)) ok = WriteFrom(p.client, p.down.ready);
      if (ok && (server_poll.revents & POLLOUT)) ok = WriteFrom(p.server, p.up.ready);
      p.closed = !ok;
    }
    for (Pipe& p : pipes) {
      if (!p.closed) continue;
      ::close(p.client);
      ::close(p.server);
    }
    std::erase_if(pipes, [](const Pipe& p) { return p.closed; });
  }
  for (Pipe& p : pipes) {
    ::close(p.client);
    ::close(p.server);
  }
}

}  // namespace kvchaos::harness::real
