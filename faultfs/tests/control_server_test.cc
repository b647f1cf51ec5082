// The control server in process, over a real Unix socket in a temp dir: its socket is its
// owner's only, no client can hold up another or shutdown, and every bound (clients, line length,
// queued connections) answers with an error instead of a hang.
#include "faultfs/control_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "testing/temp_dir.h"

namespace kvchaos::faultfs {
namespace {

using ::testing::HasSubstr;

// Liveness bound for one reply: generous, since machines are noisy; only a hang exceeds it.
constexpr int kReplyWaitMs = 10000;

int Connect(const std::string& path, bool nonblocking = false) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads until `lines` newlines arrived, the peer closed, or kReplyWaitMs passed without data.
std::string ReadLines(int fd, int lines) {
  std::string got;
  char buf[4096];
  while (std::count(got.begin(), got.end(), '\n') < lines) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, kReplyWaitMs) != 1) break;
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

bool SendLine(int fd, const std::string& line) {
  const std::string data = line + "\n";
  return send(fd, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
}

class ControlServerTest : public ::testing::Test {
 protected:
  void Start() {
    Status s = server_.Start(socket_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // One request on a fresh connection, answered within the liveness bound.
  std::string Request(const std::string& line) {
    const int fd = Connect(socket_);
    if (fd < 0) return "connect failed";
    SendLine(fd, line);
    std::string reply = ReadLines(fd, 1);
    close(fd);
    return reply;
  }

  kvchaos::testing::TempDir dir_{"faultfs-ctl"};
  std::string socket_ = dir_.str() + "/ctl.sock";
  RuleEngine engine_{1, nullptr};
  std::promise<void> crash_entered_;
  std::shared_future<void> crash_release_;
  ControlCommands commands_{engine_, [this] {
                              if (crash_release_.valid()) {
                                crash_entered_.set_value();
                                crash_release_.wait();
                              }
                              return nlohmann::json{{"files", nlohmann::json::array()}};
                            }};
  ControlServer server_{commands_};
};

TEST_F(ControlServerTest, TheSocketIsItsOwnersOnlyWhateverTheUmask) {
  const mode_t old = umask(0);
  Start();
  umask(old);
  struct stat st {};
  ASSERT_EQ(stat(socket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "rules can break the mount: only its owner may connect";
}

TEST_F(ControlServerTest, AClientThatNeverReadsStallsOnlyItselfAndNotShutdown) {
  Start();
  // Requests until the server stops taking them (its replies to us pile up unread).
  const int hog = Connect(socket_, /*nonblocking=*/true);
  ASSERT_GE(hog, 0);
  const std::string line = "{\"cmd\":\"stats\"}\n";
  size_t sent = 0;
  for (int stalls = 0; stalls < 10 && sent < (size_t{256} << 20);) {
    const ssize_t n = send(hog, line.data(), line.size(), MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    pollfd p{hog, POLLOUT, 0};
    if (poll(&p, 1, 100) == 0) ++stalls;  // not writable for 100 ms: the server stopped reading
  }
  ASSERT_LT(sent, size_t{256} << 20) << "the server kept reading from a client that never reads its replies";

  EXPECT_THAT(Request(R"({"cmd":"list"})"), HasSubstr("\"ok\":true")) << "another client must be served";

  auto stopped = std::async(std::launch::async, [this] { server_.Stop(); });
  const bool in_time = stopped.wait_for(std::chrono::milliseconds(kReplyWaitMs)) == std::future_status::ready;
  close(hog);  // lets a wedged server go, so the test ends either way
  stopped.wait();
  EXPECT_TRUE(in_time) << "Stop() waited for the client that never reads";
}

TEST_F(ControlServerTest, ManyClientsQueueWhileTheLoopIsBusy) {
  Start();
  std::promise<void> release;
  crash_release_ = release.get_future().share();
  const int busy = Connect(socket_);
  ASSERT_TRUE(SendLine(busy, R"({"cmd":"crash"})"));
  crash_entered_.get_future().wait();  // the loop is inside the command: nobody is accepted now

  std::vector<int> waiting;
  for (int i = 0; i < 60; ++i) {
    const int fd = Connect(socket_, /*nonblocking=*/true);
    EXPECT_GE(fd, 0) << "connection " << i << " refused while the loop was busy (listen backlog too short)";
    if (fd >= 0) waiting.push_back(fd);
  }
  release.set_value();
  EXPECT_THAT(ReadLines(busy, 1), HasSubstr("\"ok\":true"));
  close(busy);
  for (int fd : waiting) {
    EXPECT_TRUE(SendLine(fd, R"({"cmd":"list"})"));
    EXPECT_THAT(ReadLines(fd, 1), HasSubstr("\"ok\":true"));
    close(fd);
  }
}

TEST_F(ControlServerTest, ClientsPastTheBoundAreToldSoAndTheNextOneAfterACloseIsServed) {
  Start();
  std::vector<int> held;
  for (size_t i = 0; i < ControlServer::kMaxClients; ++i) {
    const int fd = Connect(socket_);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendLine(fd, R"({"cmd":"list"})"));
    ASSERT_THAT(ReadLines(fd, 1), HasSubstr("\"ok\":true")) << "client " << i;
    held.push_back(fd);
  }
  EXPECT_THAT(Request(R"({"cmd":"list"})"), HasSubstr("too many control clients (64 connected)"));
  close(held.back());
  held.pop_back();
  // Until the server has seen the close: a busy machine may take a while to run its loop, so ask
  // until a deadline rather than a number of times (100 quick attempts all failed beside a soak).
  std::string reply;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (reply.find("\"ok\":true") == std::string::npos && std::chrono::steady_clock::now() < give_up) {
    reply = Request(R"({"cmd":"list"})");
    if (reply.find("\"ok\":true") == std::string::npos) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_THAT(reply, HasSubstr("\"ok\":true"));
  for (int fd : held) close(fd);
}

TEST_F(ControlServerTest, AClientThatStopsSendingStillGetsEveryReply) {
  Start();
  const int fd = Connect(socket_);
  ASSERT_TRUE(SendLine(fd, R"({"cmd":"list"})") && SendLine(fd, R"({"cmd":"bogus"})") &&
              SendLine(fd, R"({"cmd":"stats"})"));
  shutdown(fd, SHUT_WR);  // like `printf ... | nc -U -N`
  const std::string got = ReadLines(fd, 4);
  close(fd);
  EXPECT_EQ(std::count(got.begin(), got.end(), '\n'), 3) << got;
  EXPECT_THAT(got, HasSubstr("unknown cmd 'bogus'"));
}

TEST_F(ControlServerTest, ALineLongerThanTheBoundIsAnsweredWithAnErrorAndClosed) {
  Start();
  const int fd = Connect(socket_);
  const std::string big(ControlServer::kMaxLineBytes + 8192, 'x');
  std::future<void> writer = std::async(std::launch::async, [&] {
    (void)!send(fd, big.data(), big.size(), MSG_NOSIGNAL);  // may stop early once the server closes
  });
  EXPECT_THAT(ReadLines(fd, 1), HasSubstr("request line longer than 1 MiB"));
  writer.wait();
  close(fd);
  EXPECT_THAT(Request(R"({"cmd":"list"})"), HasSubstr("\"ok\":true"));
}

}  // namespace
}  // namespace kvchaos::faultfs
