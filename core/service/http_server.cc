// One port of the node's HTTP API: an epoll loop in front of bounded workers (see http_server.h).
#include "core/service/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/common/assert.h"
#include "core/common/json_text.h"
#include "core/service/http_request_scan.h"

namespace kvchaos::service {
namespace {

constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = UINT64_MAX;
constexpr size_t kReadChunk = 64 * 1024;
// How long a closing connection's late input is read and dropped, so its answer is not reset.
constexpr auto kLingerTime = std::chrono::seconds(2);
// The loop looks at deadlines (and the stop flag) at least this often.
constexpr int kTickMs = 50;

std::string_view Reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

std::string CannedAnswer(int status, std::string_view code, const std::string& message) {
  const std::string body = DumpJson(nlohmann::json{{"code", code}, {"message", message}});
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(Reason(status)) + "\r\n";
  if (status == 401) out += "WWW-Authenticate: Bearer realm=\"kvchaos admin\"\r\n";
  out += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
  return out;
}

// Constant-time comparison of the credentials (the token must not leak through timing).
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string AddressText(const sockaddr_storage& addr, int* port) {
  char host[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    *port = ntohs(in->sin_port);
    return host;
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
  ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
  *port = ntohs(in6->sin6_port);
  return host;
}

bool IsLoopback(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr.s_addr) >> 24) == 127;
  }
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr;
  if (IN6_IS_ADDR_LOOPBACK(&a)) return true;
  return IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127;
}

}  // namespace

struct HttpServer::Connection {
  enum class State { kReading, kWorking, kWriting, kLingering };
  uint64_t id = 0;
  int fd = -1;
  std::string peer_ip;
  int peer_port = 0;
  State state = State::kReading;
  std::string in;          // read and not yet taken as a request
  bool request_started = false;  // bytes of the next request arrived (its deadline runs)
  bool peer_done = false;  // the client shut its sending side: answer what is complete, then close
  bool continue_sent = false;
  std::string out;         // the answer being written
  size_t out_sent = 0;
  bool close_after = false;  // linger and close once `out` is written
  int requests = 0;
  MonoTime deadline{};
  uint32_t watched = 0;    // the epoll events asked for
};

HttpServer::HttpServer(Runtime& runtime, HttpServerOptions options, Handler handler)
    : runtime_(runtime), options_(std::move(options)), handler_(std::move(handler)), done_mu_(runtime) {}

HttpServer::~HttpServer() { Stop(); }

Result<int> HttpServer::Bind(const std::string& host, int port) {
  KVCHAOS_ASSERT(listen_fd_ < 0, "HttpServer::Bind called twice");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return Status::Unavailable("cannot bind " + options_.what + " on '" + host + "': " + ::gai_strerror(rc));
  }
  int err = 0;
  for (addrinfo* ai = found; ai != nullptr && listen_fd_ < 0; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      err = errno;
      ::close(fd);
      continue;
    }
    listen_fd_ = fd;
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return Status(StatusCode::kUnavailable,
                  "cannot bind " + options_.what + " on " + host + ":" + std::to_string(port) + " (in use?)", err);
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  int bound = 0;
  const std::string ip = AddressText(addr, &bound);
  address_ = (addr.ss_family == AF_INET6 ? "[" + ip + "]" : ip) + ":" + std::to_string(bound);
  loopback_only_ = IsLoopback(addr);
  return bound;
}

Status HttpServer::Serve() {
  if (listen_fd_ < 0) return Status::Internal("HttpServer::Serve before Bind");
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return Status::IoError("epoll/eventfd for " + options_.what, errno);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenId;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.u64 = kWakeId;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  workers_ = std::make_unique<RuntimeTaskQueue>(runtime_, "kvc_hw_" + options_.name + "_", options_.workers,
                                                static_cast<size_t>(std::max(1, options_.limits.max_queued_requests)));
  loop_ = runtime_.Spawn("kvc_http_" + options_.name, [this] { Loop(); });
  return Status::Ok();
}

void HttpServer::Stop() {
  stopping_.store(true, std::memory_order_release);
  Wake();
  loop_.Join();
  if (workers_) workers_->Shutdown();  // runs what is queued; its answers are dropped
  {
    MutexLock lock(done_mu_);
    done_.clear();
  }
  for (int* fd : {&listen_fd_, &epoll_fd_, &wake_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

HttpServerStats HttpServer::stats() const {
  HttpServerStats s;
  s.accepted = accepted_.load();
  s.handed = handed_.load();
  s.served = served_.load();
  s.refused_connections = refused_connections_.load();
  s.refused_busy = refused_busy_.load();
  s.refused_framing = refused_framing_.load();
  s.refused_unauthorized = refused_unauthorized_.load();
  s.timed_out = timed_out_.load();
  return s;
}

void HttpServer::Wake() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void HttpServer::Loop() {
  std::vector<epoll_event> events(64);
  while (!stopping_.load(std::memory_order_acquire)) {
    const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), kTickMs);
    if (n < 0 && errno != EINTR) {
      spdlog::error("{}: epoll_wait failed: {}; the port stops serving", options_.what, ErrnoText(errno));
      break;
    }
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[static_cast<size_t>(i)].data.u64;
      if (id == kListenId) {
        AcceptAll();
      } else if (id == kWakeId) {
        uint64_t count = 0;
        [[maybe_unused]] const ssize_t r = ::read(wake_fd_, &count, sizeof(count));
        TakeAnswers();
      } else {
        OnEvents(id, events[static_cast<size_t>(i)].events);
      }
    }
    Expire();
  }
  while (!connections_.empty()) Close(connections_.begin()->first);
}

void HttpServer::AcceptAll() {
  for (;;) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        spdlog::warn("{}: out of file descriptors with {} connections open", options_.what, connections_.size());
      }
      return;  // EAGAIN: none left; others: try again on the next readiness
    }
    ++accepted_;
    const int max = std::max(1, options_.limits.max_connections);
    if (static_cast<int>(connections_.size()) >= max) {
      ++refused_connections_;
      RefuseAtAccept(fd, options_.what + ": " + std::to_string(connections_.size()) +
                             " connections are open (kvcm.service.http_max_connections " + std::to_string(max) +
                             "); retry later");
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->id = next_id_++;
    c->fd = fd;
    c->peer_ip = AddressText(addr, &c->peer_port);
    c->deadline = runtime_.Now() + Millis(options_.limits.request_timeout_ms);
    Connection& conn = *c;
    connections_.emplace(conn.id, std::move(c));
    epoll_event ev{};
    ev.events = 0;
    ev.data.u64 = conn.id;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    Watch(conn, EPOLLIN);
  }
}

void HttpServer::RefuseAtAccept(int fd, const std::string& reason) {
  // What the client already sent is read first: closing a socket with unread input resets it,
  // and a reset can take the answer with it. Then the answer, FIN, and the slot is free at once.
  char scratch[4096];
  for (int i = 0; i < 64 && ::recv(fd, scratch, sizeof(scratch), 0) > 0; ++i) {
  }
  const std::string answer = CannedAnswer(503, "Unavailable", reason);
  [[maybe_unused]] const ssize_t n = ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  for (int i = 0; i < 64 && ::recv(fd, scratch, sizeof(scratch), 0) > 0; ++i) {
  }
  ::close(fd);
}

void HttpServer::Watch(Connection& c, uint32_t events) {
  if (c.watched == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.watched = events;
}

void HttpServer::Close(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  ::close(c.fd);
  connections_.erase(it);
}

void HttpServer::OnEvents(uint64_t id, uint32_t events) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  switch (c.state) {
    case Connection::State::kReading:
      ReadInto(c);  // reads what is there, then sees the hang-up (0 bytes)
      return;
    case Connection::State::kLingering: {
      char scratch[4096];
      for (;;) {
        const ssize_t n = ::recv(c.fd, scratch, sizeof(scratch), 0);
        if (n > 0) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        Close(id);  // the client closed its side too (or failed)
        return;
      }
    }
    case Connection::State::kWriting:
      if ((events & (EPOLLERR | EPOLLHUP)) != 0) {
        Close(id);
        return;
      }
      Flush(c);
      return;
    case Connection::State::kWorking:
      // Only errors and hang-ups are reported now; the worker's answer for it is then dropped.
      if ((events & (EPOLLERR | EPOLLHUP)) != 0) Close(id);
      return;
  }
}

void HttpServer::ReadInto(Connection& c) {
  const HttpLimits& lim = options_.limits;
  // Enough for one whole request and a chunk past it: the scan refuses or completes before this.
  const size_t cap = static_cast<size_t>(lim.max_header_bytes + lim.max_body_bytes) + kReadChunk;
  while (c.in.size() < cap) {
    const size_t at = c.in.size();
    c.in.resize(at + kReadChunk);
    const ssize_t n = ::recv(c.fd, c.in.data() + at, kReadChunk, 0);
    c.in.resize(at + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || c.in.empty()) {
      Close(c.id);  // reset, or closed with nothing to answer
      return;
    }
    c.peer_done = true;  // closed after sending: what is complete still gets its answer
    break;
  }
  const uint64_t id = c.id;
  Advance(c);  // may close the connection
  // A client that is done sending and whose request is not complete gets no answer.
  auto it = connections_.find(id);
  if (it != connections_.end() && it->second->peer_done && it->second->state == Connection::State::kReading) Close(id);
}

void HttpServer::Advance(Connection& c) {
  if (c.state != Connection::State::kReading || c.in.empty()) return;
  if (!c.request_started) {
    c.request_started = true;
    c.deadline = runtime_.Now() + Millis(options_.limits.request_timeout_ms);
  }
  HttpRequestScan scan = ScanHttpRequest(c.in, options_.limits);
  if (scan.outcome == HttpRequestScan::Outcome::kRefused) {
    ++refused_framing_;
    Refuse(c, scan.http_status, "InvalidArgument", options_.what + ": " + scan.reason);
    return;
  }
  if (!scan.headers_complete) return;
  if (!options_.bearer_token.empty() && !SameSecret(scan.authorization, "Bearer " + options_.bearer_token)) {
    ++refused_unauthorized_;
    Refuse(c, 401, "Unauthenticated",
           options_.what + ": this port needs the admin token (kvcm.service.admin_token) as 'Authorization: Bearer "
                           "<token>'; the request " +
               std::string(scan.authorization.empty() ? "has none" : "carries another"));
    return;
  }
  if (scan.outcome == HttpRequestScan::Outcome::kNeedMore) {
    if (scan.expect_continue && !c.continue_sent) {
      c.continue_sent = true;
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      // Nothing else is being written on the connection now, so the socket buffer takes it.
      if (::send(c.fd, kContinue.data(), kContinue.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(kContinue.size())) {
        Close(c.id);
      }
    }
    return;
  }
  std::string request = c.in.substr(0, scan.request_bytes);
  c.in.erase(0, scan.request_bytes);
  const bool last = !scan.keep_alive || c.peer_done || ++c.requests >= kMaxRequestsPerConnection;
  Queue(c, std::move(request), last);
}

void HttpServer::Queue(Connection& c, std::string request, bool last) {
  c.state = Connection::State::kWorking;
  c.close_after = last;
  Watch(c, 0);  // pipelined bytes stay in the kernel until this answer is out
  const uint64_t id = c.id;
  auto job = [this, id, request = std::move(request), ip = c.peer_ip, port = c.peer_port, last] {
    std::string answer = handler_(request, ip, port, last);
    {
      MutexLock lock(done_mu_);
      done_.push_back(Done{id, std::move(answer)});
    }
    Wake();
  };
  if (workers_->TryEnqueue(std::move(job))) {
    ++handed_;
  } else {
    ++refused_busy_;
    Refuse(c, 503, "Unavailable",
           options_.what + ": " + std::to_string(options_.limits.max_queued_requests) +
               " requests already wait for a worker (kvcm.service.http_max_queued_requests); retry later");
  }
}

void HttpServer::TakeAnswers() {
  std::deque<Done> done;
  {
    MutexLock lock(done_mu_);
    done.swap(done_);
  }
  for (Done& d : done) {
    auto it = connections_.find(d.id);
    if (it == connections_.end()) continue;
    Connection& c = *it->second;
    KVCHAOS_ASSERT(c.state == Connection::State::kWorking, options_.what + ": an answer for a connection not waiting");
    ++served_;
    c.out = std::move(d.answer);
    c.out_sent = 0;
    c.state = Connection::State::kWriting;
    c.deadline = runtime_.Now() + Millis(options_.limits.request_timeout_ms);
    Flush(c);
  }
}

void HttpServer::Refuse(Connection& c, int status, std::string_view code, const std::string& reason) {
  spdlog::debug("{}: {} to {}:{}: {}", options_.what, status, c.peer_ip, c.peer_port, reason);
  c.in.clear();
  c.out = CannedAnswer(status, code, reason);
  c.out_sent = 0;
  c.close_after = true;
  c.state = Connection::State::kWriting;
  c.deadline = runtime_.Now() + Millis(options_.limits.request_timeout_ms);
  Flush(c);
}

void HttpServer::Flush(Connection& c) {
  while (c.out_sent < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      Watch(c, EPOLLOUT);
      return;
    }
    if (n < 0 && errno == EINTR) continue;
    Close(c.id);
    return;
  }
  c.out.clear();
  c.out_sent = 0;
  if (c.close_after) {
    // FIN first, then read and drop what the client still sends, so it reads the answer.
    ::shutdown(c.fd, SHUT_WR);
    c.state = Connection::State::kLingering;
    c.deadline = runtime_.Now() + kLingerTime;
    Watch(c, EPOLLIN);
    return;
  }
  c.state = Connection::State::kReading;
  c.request_started = false;
  c.continue_sent = false;
  c.deadline = runtime_.Now() + Millis(options_.limits.idle_timeout_ms);
  Watch(c, EPOLLIN);
  Advance(c);  // a pipelined request may already be here
}

void HttpServer::Expire() {
  const MonoTime now = runtime_.Now();
  std::vector<uint64_t> expired;
  for (const auto& [id, c] : connections_) {
    if (c->state != Connection::State::kWorking && c->deadline <= now) expired.push_back(id);
  }
  for (uint64_t id : expired) {
    auto it = connections_.find(id);
    if (it == connections_.end()) continue;
    Connection& c = *it->second;
    if (c.state == Connection::State::kReading && c.request_started) {
      ++timed_out_;
      Refuse(c, 408, "Timeout",
             options_.what + ": the request did not arrive within " + std::to_string(options_.limits.request_timeout_ms) +
                 " ms (kvcm.service.http_request_timeout_ms)");
      continue;
    }
    if (c.state == Connection::State::kWriting) ++timed_out_;
    Close(id);  // idle, lingering done, or an answer the client does not take
  }
}

}  // namespace kvchaos::service
