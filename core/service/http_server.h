// HttpServer: one port of the node's HTTP API — connections, framing and limits — in front of a
// handler that turns one complete request into its answer (HttpApi hands it to cpp-httplib).
//
// One event loop thread per port (`kvc_http_<name>`, epoll, non-blocking sockets) accepts, reads
// and writes every connection; a request reaches a worker (`kvc_hw_<name>_<i>`, RuntimeTaskQueue)
// only once all of its bytes are in, so a slow or idle client holds a connection slot, never a
// worker (cpp-httplib 0.11 reads each connection on a worker with blocking reads: 8 clients
// sending a header line a second stopped the API). Every limit of HttpLimits is enforced here and
// answered at once, with a JSON body in the API's shape ({"code","message"}) and the connection
// closed after it:
//   - framing (ScanHttpRequest): 400/411/413/417/431/505 — an oversized body is refused from its
//     Content-Length, before any of it is read;
//   - a request not complete within request_timeout_ms of its first byte: 408;
//   - with a bearer token set (the admin port), a request whose "Authorization: Bearer <token>"
//     is missing or wrong: 401, decided from the headers, before the body is read;
//   - more than max_connections open: a new connection is answered 503; more than
//     max_queued_requests complete requests waiting for a worker: 503.
// Kept-alive connections wait at most idle_timeout_ms for their next request; an answer the client
// does not take within request_timeout_ms closes the connection. Refused connections are closed
// gracefully (what the client sent is read first, then the answer and FIN, then what it still
// sends is read and dropped for a moment), so the client reads the answer instead of a reset.
// Threads and time go through kvchaos::Runtime; the loop's waits are epoll_wait on its sockets.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/common/thread_annotations.h"
#include "core/service/http_limits.h"
#include "core/service/runtime_task_queue.h"

namespace kvchaos::service {

struct HttpServerOptions {
  std::string name = "meta";  // thread names: kvc_http_<name>, kvc_hw_<name>_<i> (name: 4 chars at most)
  std::string what = "kvcm.service.meta_http_port";  // the port's config key, for messages
  int workers = 8;
  HttpLimits limits;
  std::string bearer_token;  // non-empty: every request must carry "Authorization: Bearer <token>"
};

// What the port did so far (tests and logs).
struct HttpServerStats {
  uint64_t accepted = 0;
  uint64_t handed = 0;                // complete requests handed to the workers
  uint64_t served = 0;                // of them, answered
  uint64_t refused_connections = 0;   // 503: max_connections
  uint64_t refused_busy = 0;          // 503: max_queued_requests
  uint64_t refused_framing = 0;       // 400/411/413/417/431/505
  uint64_t refused_unauthorized = 0;  // 401
  uint64_t timed_out = 0;             // 408, and connections closed for not taking their answer
};

class HttpServer {
 public:
  // The answer's bytes for one request (its exact bytes). `last`: the connection closes after it
  // (the answer should say "Connection: close"). Runs on a worker; may run concurrently.
  using Handler = std::function<std::string(std::string_view request, const std::string& peer_ip, int peer_port,
                                            bool last)>;

  HttpServer(Runtime& runtime, HttpServerOptions options, Handler handler);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds `host`:`port` (0: any free port) and listens; the bound port.
  Result<int> Bind(const std::string& host, int port);
  // The bound socket address ("127.0.0.1:6492", "[::]:6492") and whether only loopback reaches it.
  std::string address() const { return address_; }
  bool loopback_only() const { return loopback_only_; }
  // Starts the loop and the workers (after Bind).
  Status Serve();
  // Closes every connection, stops the loop, runs what the workers hold, joins every thread.
  void Stop();

  HttpServerStats stats() const;

  // Requests one connection may carry (then it is closed).
  static constexpr int kMaxRequestsPerConnection = 1000;

 private:
  struct Connection;
  struct Done {
    uint64_t id;
    std::string answer;
  };

  void Loop();
  void AcceptAll();
  // Answers a connection past max_connections 503 and closes it without keeping it.
  void RefuseAtAccept(int fd, const std::string& reason);
  void OnEvents(uint64_t id, uint32_t events);
  void ReadInto(Connection& c);
  // Frames what `c` has read: answers a refusal, queues a complete request, or waits for more.
  void Advance(Connection& c);
  void Queue(Connection& c, std::string request, bool last);
  void TakeAnswers();
  // Answers `status` with `reason` in the API's JSON shape and closes after it.
  void Refuse(Connection& c, int status, std::string_view code, const std::string& reason);
  void Flush(Connection& c);
  void Expire();
  void Watch(Connection& c, uint32_t events);
  void Close(uint64_t id);
  void Wake();

  Runtime& runtime_;
  const HttpServerOptions options_;
  const Handler handler_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::string address_;
  bool loopback_only_ = false;
  std::unique_ptr<RuntimeTaskQueue> workers_;
  Thread loop_;
  std::atomic<bool> stopping_{false};
  // Loop thread only.
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;  // at most max_connections
  uint64_t next_id_ = 1;
  // Answers from the workers for the loop to write.
  Mutex done_mu_;
  std::deque<Done> done_ GUARDED_BY(done_mu_);
  // Counters, written by the loop.
  std::atomic<uint64_t> accepted_{0}, handed_{0}, served_{0}, refused_connections_{0}, refused_busy_{0}, refused_framing_{0},
      refused_unauthorized_{0}, timed_out_{0};
};

}  // namespace kvchaos::service
