// HttpLimits: what one port of the node's HTTP API accepts (kvcm.service.http_* in node_config.h).
// A client that breaks a limit is answered at once — 400/411/413/431/505 for a request that is not
// one we take, 408 for one that arrives too slowly, 503 when the node is full — and never holds a
// worker: requests are read by the port's event loop, and only complete ones reach a worker.
#pragma once

#include <cstdint>

namespace kvchaos::service {

struct HttpLimits {
  // Open connections per port; past it a new connection is answered 503 and closed.
  int max_connections = 512;
  // Complete requests waiting for a worker, per port; past it a request is answered 503.
  int max_queued_requests = 64;
  // A request (line, headers and body) must arrive within this from its first byte, and its answer
  // be taken by the client within it; else 408 (or the connection is closed).
  int64_t request_timeout_ms = 10000;
  // A kept-alive connection with no request started is closed after this.
  int64_t idle_timeout_ms = 5000;
  // Request line plus headers, in bytes (431 past it), and how many header lines (431).
  int64_t max_header_bytes = 16 * 1024;
  int max_headers = 64;
  // Body bytes (Content-Length); past it 413 before any of the body is read.
  int64_t max_body_bytes = 16 << 20;
  // Entries of any array in a request body ("keys", "checksums", ...); past it 400 naming the
  // field. A body holds at most kValuesPerKey times as many JSON values in all.
  int max_keys_per_call = 16384;
  static constexpr int kValuesPerKey = 8;
};

}  // namespace kvchaos::service
