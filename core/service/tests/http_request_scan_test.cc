// ScanHttpRequest: where a request ends, and what it refuses before a byte of the body is read.
#include "core/service/http_request_scan.h"

#include <gtest/gtest.h>

namespace kvchaos::service {
namespace {

using Outcome = HttpRequestScan::Outcome;

TEST(HttpRequestScanTest, ACompleteRequestEndsAfterItsContentLength) {
  const std::string req = "POST /api/X HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}";
  HttpRequestScan s = ScanHttpRequest(req + "GET /next", HttpLimits{});
  ASSERT_EQ(s.outcome, Outcome::kComplete) << s.reason;
  EXPECT_EQ(s.request_bytes, req.size()) << "a pipelined request after it must not be taken as its body";
  EXPECT_EQ(s.body_bytes, 2u);
  EXPECT_TRUE(s.keep_alive);
}

TEST(HttpRequestScanTest, PartsOfARequestNeedMoreAndSayWhatIsKnown) {
  EXPECT_EQ(ScanHttpRequest("POST /api/X HT", HttpLimits{}).outcome, Outcome::kNeedMore);
  HttpRequestScan head = ScanHttpRequest("POST /api/X HTTP/1.1\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n{", {});
  EXPECT_EQ(head.outcome, Outcome::kNeedMore);
  EXPECT_TRUE(head.headers_complete);
  EXPECT_TRUE(head.expect_continue);
}

TEST(HttpRequestScanTest, ConnectionAndAuthorizationAreRead) {
  HttpRequestScan close = ScanHttpRequest("GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n", {});
  EXPECT_FALSE(close.keep_alive);
  EXPECT_FALSE(ScanHttpRequest("GET / HTTP/1.0\r\n\r\n", {}).keep_alive) << "HTTP/1.0 closes unless asked not to";
  EXPECT_TRUE(ScanHttpRequest("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", {}).keep_alive);
  EXPECT_EQ(ScanHttpRequest("GET / HTTP/1.1\r\nauthorization:  Bearer t0k \r\n\r\n", {}).authorization, "Bearer t0k");
}

TEST(HttpRequestScanTest, LimitsAreRefusedWithTheirStatusBeforeTheBody) {
  HttpLimits limits;
  limits.max_body_bytes = 100;
  HttpRequestScan big = ScanHttpRequest("POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", limits);
  EXPECT_EQ(big.outcome, Outcome::kRefused);
  EXPECT_EQ(big.http_status, 413);
  limits.max_header_bytes = 64;
  HttpRequestScan endless = ScanHttpRequest("GET / HTTP/1.1\r\nX: " + std::string(100, 'a'), limits);
  EXPECT_EQ(endless.http_status, 431) << "a head that never ends must be refused once it passes the bound";
  EXPECT_EQ(ScanHttpRequest(std::string(100, 'a'), limits).http_status, 431) << "no newline at all";
}

TEST(HttpRequestScanTest, SmugglingShapesAreRefused) {
  for (const char* bad : {"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                          "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n",
                          "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
                          "POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n",
                          "POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n",
                          "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
                          "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n",
                          "POST / HTTP/1.1\r\nX: a\rb\r\n\r\n",
                          "POST  / HTTP/1.1\r\n\r\n",
                          "POST / HTTP/1.1 \r\n\r\n",
                          "\r\nPOST / HTTP/1.1\r\n\r\n"}) {
    HttpRequestScan s = ScanHttpRequest(bad, HttpLimits{});
    EXPECT_EQ(s.outcome, Outcome::kRefused) << "accepted: " << bad;
    EXPECT_EQ(s.http_status, 400) << bad << ": " << s.reason;
  }
}

}  // namespace
}  // namespace kvchaos::service
