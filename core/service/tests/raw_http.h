// A raw HTTP client for tests of the node's ports: exact bytes out (malformed framing, slow
// trickles, headers without their body), the answer read back as the server wrote it. Every wait
// is bounded; a socket closes when its RawConnection goes away.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvchaos::service::testing {

struct RawAnswer {
  int status = 0;  // 0: no answer before the connection closed or the wait ran out
  std::string head;
  nlohmann::json body;  // the JSON body (discarded when it is not JSON)
  bool closed = false;  // the server closed the connection after it
};

class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  // False when the server closed or reset the connection.
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads one answer (head, then Content-Length bytes of body) within `limit`.
  RawAnswer Read(std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    RawAnswer answer;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      const size_t head_end = buffer_.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const std::string head = buffer_.substr(0, head_end);
        size_t length = 0;
        for (std::string_view key : {"Content-Length: ", "content-length: "}) {
          if (size_t at = head.find(key); at != std::string::npos) length = std::strtoul(head.c_str() + at + key.size(), nullptr, 10);
        }
        if (buffer_.size() >= head_end + 4 + length) {
          answer.head = head;
          answer.status = std::atoi(head.c_str() + 9);  // "HTTP/1.1 200 ..."
          answer.body = nlohmann::json::parse(buffer_.substr(head_end + 4, length), nullptr, false);
          buffer_.erase(0, head_end + 4 + length);
          if (answer.status == 100) return Read(limit);  // an interim answer; the real one follows
          answer.closed = head.find("Connection: close") != std::string::npos;
          return answer;
        }
      }
      if (!Fill(deadline)) return answer;
    }
  }

  // True when the server closes the connection within `limit` (reading and dropping what comes).
  bool WaitClosed(std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (Fill(deadline)) buffer_.clear();
    return eof_;
  }

 private:
  bool Fill(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || fd_ < 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string buffer_;
  bool eof_ = false;
};

// "POST /api/<call> HTTP/1.1" with a JSON body and a Content-Length.
inline std::string PostRequest(const std::string& call, const std::string& body, const std::string& extra_headers = "") {
  return "POST /api/" + call + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace kvchaos::service::testing
