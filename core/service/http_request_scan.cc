// Strict framing of one HTTP/1.x request (see http_request_scan.h).
#include "core/service/http_request_scan.h"

#include <algorithm>
#include <cctype>

namespace kvchaos::service {
namespace {

// RFC 9110 tchar.
bool IsTokenChar(unsigned char c) {
  if (std::isalnum(c) != 0) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return IsTokenChar(static_cast<unsigned char>(c)); });
}

// Field values: visible characters, obs-text, space and tab; never other controls.
bool IsFieldValue(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c == '\t' || (c >= 0x20 && c != 0x7f);
  });
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Printable, bounded copy of client bytes for a reason text.
std::string Quote(std::string_view s) {
  std::string out = "'";
  for (char ch : s.substr(0, 64)) {
    const auto c = static_cast<unsigned char>(ch);
    out += (c >= 0x20 && c < 0x7f) ? ch : '?';
  }
  if (s.size() > 64) out += "...";
  return out + "'";
}

HttpRequestScan Refuse(int status, std::string reason) {
  HttpRequestScan scan;
  scan.outcome = HttpRequestScan::Outcome::kRefused;
  scan.http_status = status;
  scan.reason = std::move(reason);
  return scan;
}

// "METHOD SP target SP HTTP/1.x"; "" when fine, else the problem (and *status).
std::string CheckRequestLine(std::string_view line, bool* http10, int* status) {
  *status = 400;
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return "request line " + Quote(line) + " is not 'METHOD target HTTP/1.1'";
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return "request method " + Quote(method) + " is not a token";
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return c > 0x20 && c != 0x7f;
      })) {
    return "request target " + Quote(target) + " is empty or holds control characters";
  }
  if (version == "HTTP/1.1") {
    *http10 = false;
    return "";
  }
  if (version == "HTTP/1.0") {
    *http10 = true;
    return "";
  }
  if (version.size() == 8 && version.starts_with("HTTP/") && std::isdigit(static_cast<unsigned char>(version[5])) &&
      version[6] == '.' && std::isdigit(static_cast<unsigned char>(version[7]))) {
    *status = 505;
    return "HTTP version " + Quote(version) + " is not supported (HTTP/1.1 and HTTP/1.0 are)";
  }
  return "HTTP version " + Quote(version) + " is not 'HTTP/1.1'";
}

}  // namespace

HttpRequestScan ScanHttpRequest(std::string_view buffer, const HttpLimits& limits) {
  const size_t max_head = static_cast<size_t>(std::max<int64_t>(limits.max_header_bytes, 1));
  HttpRequestScan scan;
  bool http10 = false;
  bool saw_length = false, saw_encoding = false, saw_authorization = false, saw_expect = false;
  bool connection_close = false, connection_keep_alive = false;
  int header_lines = 0;
  size_t pos = 0;
  for (bool first = true;; first = false) {
    const size_t nl = buffer.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (buffer.size() > max_head) {
        return Refuse(431, "request line and headers are longer than " + std::to_string(max_head) +
                               " bytes (kvcm.service.http_max_header_bytes)");
      }
      return scan;  // kNeedMore
    }
    if (nl + 1 > max_head) {
      return Refuse(431, "request line and headers are longer than " + std::to_string(max_head) +
                             " bytes (kvcm.service.http_max_header_bytes)");
    }
    if (nl == pos || buffer[nl - 1] != '\r') {
      return Refuse(400, "a line of the request head ends with a bare LF (lines end with CRLF)");
    }
    const std::string_view line = buffer.substr(pos, nl - 1 - pos);
    pos = nl + 1;
    if (first) {
      int status = 400;
      if (std::string problem = CheckRequestLine(line, &http10, &status); !problem.empty()) {
        return Refuse(status, problem);
      }
      continue;
    }
    if (line.empty()) break;  // the blank line: the head is complete
    if (++header_lines > limits.max_headers) {
      return Refuse(431, "more than " + std::to_string(limits.max_headers) +
                             " header lines (kvcm.service.http_max_headers)");
    }
    if (line.front() == ' ' || line.front() == '\t') {
      return Refuse(400, "header line " + Quote(line) + " is folded (obs-fold is not accepted)");
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return Refuse(400, "header line " + Quote(line) + " has no ':'");
    const std::string_view name = line.substr(0, colon);
    if (!IsToken(name)) {
      return Refuse(400, "header name " + Quote(name) + " is not a token (no space before ':')");
    }
    const std::string_view value = TrimOws(line.substr(colon + 1));
    if (!IsFieldValue(value)) return Refuse(400, "header " + Quote(name) + " holds control characters");
    if (EqualsNoCase(name, "Content-Length")) {
      if (saw_length) return Refuse(400, "Content-Length is given twice");
      saw_length = true;
      if (value.empty() || value.size() > 19 ||
          !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return Refuse(400, "Content-Length " + Quote(value) + " is not a number of bytes");
      }
      scan.body_bytes = std::stoull(std::string(value));
    } else if (EqualsNoCase(name, "Transfer-Encoding")) {
      saw_encoding = true;
    } else if (EqualsNoCase(name, "Authorization")) {
      if (saw_authorization) return Refuse(400, "Authorization is given twice");
      saw_authorization = true;
      scan.authorization = std::string(value);
    } else if (EqualsNoCase(name, "Expect")) {
      if (saw_expect || !EqualsNoCase(value, "100-continue")) {
        return Refuse(417, "Expect " + Quote(value) + " is not supported (only one 100-continue)");
      }
      saw_expect = true;
      scan.expect_continue = true;
    } else if (EqualsNoCase(name, "Connection")) {
      std::string_view rest = value;
      while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string_view option = TrimOws(rest.substr(0, comma));
        if (EqualsNoCase(option, "close")) connection_close = true;
        if (EqualsNoCase(option, "keep-alive")) connection_keep_alive = true;
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
    }
  }
  if (saw_encoding && saw_length) {
    return Refuse(400, "Content-Length and Transfer-Encoding together (a request whose end is ambiguous)");
  }
  if (saw_encoding) return Refuse(411, "Transfer-Encoding is not accepted (no chunked bodies): send Content-Length");
  if (scan.body_bytes > static_cast<uint64_t>(std::max<int64_t>(limits.max_body_bytes, 0))) {
    return Refuse(413, "request body of " + std::to_string(scan.body_bytes) + " bytes is larger than " +
                           std::to_string(limits.max_body_bytes) + " (kvcm.service.http_max_body_bytes)");
  }
  scan.headers_complete = true;
  scan.header_bytes = pos;
  scan.request_bytes = pos + scan.body_bytes;
  scan.keep_alive = http10 ? (connection_keep_alive && !connection_close) : !connection_close;
  if (buffer.size() >= scan.request_bytes) scan.outcome = HttpRequestScan::Outcome::kComplete;
  return scan;
}

}  // namespace kvchaos::service
