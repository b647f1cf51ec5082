// ScanHttpRequest: the framing of one HTTP/1.x request at the start of a connection's buffer, read
// strictly before anything else looks at it (RFC 9112), so the node never guesses where a request
// ends: the request line, the header lines, then exactly Content-Length body bytes. Refused, with
// the HTTP status to answer and a reason naming what was wrong:
//   400  a request line or header line that is not one (bare LF, obs-fold, a space before ':',
//        control characters), a Content-Length that is not digits or given twice, Content-Length
//        together with Transfer-Encoding (request smuggling), a header given twice that must not be
//   411  Transfer-Encoding alone (chunked bodies are not accepted; send Content-Length)
//   413  Content-Length past max_body_bytes — decided from the headers, before any body byte
//   417  an Expect other than 100-continue
//   431  more than max_header_bytes of request line and headers, or more than max_headers lines
//   505  an HTTP version other than 1.0 and 1.1
// Pure (no I/O, no allocation past the fields it returns), so it is fuzzed directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/service/http_limits.h"

namespace kvchaos::service {

struct HttpRequestScan {
  enum class Outcome { kNeedMore, kComplete, kRefused };
  Outcome outcome = Outcome::kNeedMore;
  // Known once the headers are complete (also while the body is still arriving).
  bool headers_complete = false;
  size_t header_bytes = 0;   // request line and headers, with the blank line
  uint64_t body_bytes = 0;   // Content-Length (0 without one)
  uint64_t request_bytes = 0;  // header_bytes + body_bytes: the request is the buffer's first ones
  bool keep_alive = true;    // HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with keep-alive
  bool expect_continue = false;
  std::string authorization;  // the Authorization header's value ("" without one)
  // kRefused: what to answer.
  int http_status = 0;
  std::string reason;
};

HttpRequestScan ScanHttpRequest(std::string_view buffer, const HttpLimits& limits);

}  // namespace kvchaos::service
