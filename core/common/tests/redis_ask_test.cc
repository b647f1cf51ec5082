// RedisAsk: one command on a connection of its own to a server on 127.0.0.1 (here a scripted one
// that answers with canned bytes), nullptr for a server that is not there or does not answer, and
// the reply bound of every Redis client of the core.
#include "core/common/redis_ask.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "core/common/redis_reply_bound.h"

namespace kvchaos {
namespace {

// A listening socket on 127.0.0.1 that accepts one connection, reads the command, then writes
// `answer` (nothing when it is empty: a server that does not answer) and keeps the connection
// open until destroyed.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::string answer) : answer_(std::move(answer)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 1) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    ::shutdown(fd_, SHUT_RDWR);  // ends a pending accept
    thread_.join();
    if (conn_ >= 0) ::close(conn_);
    ::close(fd_);
  }
  int port() const { return port_; }
  const std::string& request() const { return request_; }  // after the call returned

 private:
  void Serve() {
    conn_ = ::accept(fd_, nullptr, nullptr);
    if (conn_ < 0) return;
    char buf[512];
    // The whole command: it ends with the last argument's CRLF, and the test's are short.
    while (request_.find("PING\r\n") == std::string::npos) {
      const ssize_t n = ::read(conn_, buf, sizeof buf);
      if (n <= 0) return;
      request_.append(buf, static_cast<size_t>(n));
    }
    // MSG_NOSIGNAL: a client that gave up mid-answer is no SIGPIPE for the test.
    for (size_t sent = 0; sent < answer_.size();) {
      const ssize_t n = ::send(conn_, answer_.data() + sent, answer_.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  std::string answer_;
  int fd_ = -1;
  int conn_ = -1;
  int port_ = 0;
  std::string request_;
  std::thread thread_;
};

TEST(RedisAskTest, SendsTheCommandAndReturnsTheReply) {
  RedisReply text;
  RedisReply array;
  {
    ScriptedServer server("$4\r\nPONG\r\n");
    text = RedisAsk(server.port(), {"PING"});
  }
  ASSERT_NE(text, nullptr) << "a server that answered gave no reply";
  EXPECT_EQ(RedisReplyText(text.get()), "PONG");
  EXPECT_EQ(RedisArrayElements(text.get()), 0u) << "a string reply has no elements";
  {
    ScriptedServer server("*2\r\n$2\r\nab\r\n:7\r\n");
    array = RedisAsk(server.port(), {"ECHO", "two words", "PING"});
    EXPECT_EQ(server.request(), "*3\r\n$4\r\nECHO\r\n$9\r\ntwo words\r\n$4\r\nPING\r\n")
        << "each argument must go as one bulk string, spaces and all";
  }
  ASSERT_NE(array, nullptr);
  EXPECT_EQ(RedisArrayElements(array.get()), 2u);
  EXPECT_EQ(RedisReplyText(array->element[0]), "ab");
  EXPECT_EQ(RedisReplyText(array->element[1]), "") << "an integer has no string";
}

TEST(RedisAskTest, NoServerOrNoAnswerIsNull) {
  int port = 0;
  {
    ScriptedServer gone("");  // its port, closed again once it is destroyed
    port = gone.port();
  }
  EXPECT_EQ(RedisAsk(port, {"PING"}), nullptr) << "nothing listens on 127.0.0.1:" << port;
  ScriptedServer silent("");
  EXPECT_EQ(RedisAsk(silent.port(), {"PING"}, /*timeout_ms=*/100), nullptr) << "a server that never answers";
}

TEST(RedisAskTest, AnArrayPastTheBoundOfTheCoreIsRefused) {
  // A whole, well-formed reply of kMaxRedisReplyElements + 1 integers (4 MB): hiredis alone
  // parses it; with the bound every Redis client of the core has, it is refused.
  std::string answer = "*" + std::to_string(kMaxRedisReplyElements + 1) + "\r\n";
  for (int i = 0; i <= kMaxRedisReplyElements; ++i) answer += ":1\r\n";
  ScriptedServer server(answer);
  EXPECT_EQ(RedisAsk(server.port(), {"PING"}, /*timeout_ms=*/60'000), nullptr)
      << "an array of more than kMaxRedisReplyElements elements must be refused";
}

}  // namespace
}  // namespace kvchaos
