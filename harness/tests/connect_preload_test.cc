// The connect preload (harness/real/connect_preload/connect_preload.c) in a child process: a
// connection to a mapped loopback port reaches the port it is mapped to, any other one passes
// unchanged, and a malformed map stops the child at once, naming the variable.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/real/child_process.h"
#include "harness/real/connect_redirect.h"
#include "harness/real/preload_library.h"
#include "testing/temp_dir.h"

namespace kvchaos::harness::real {
namespace {

using ::testing::HasSubstr;

// A listening loopback socket that never accepts until asked: the kernel completes the handshake,
// so a pending connection says who was called.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on loopback: " << std::strerror(errno);
      return;
    }
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() {
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }
  // What the next pending connection sent ("" when none is pending).
  std::string Take() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) != 1) return "";
    const int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return "";
    char buf[16] = {};
    const ssize_t n = ::read(c, buf, sizeof buf);
    ::close(c);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "(connected, nothing sent)";
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs connect_probe PORT under the preload with `env` and waits for it to exit.
std::string RunProbe(const std::string& dir, int port, std::vector<std::string> env, int* exit_code) {
  const std::string log = dir + "/probe-" + std::to_string(port) + ".log";
  ChildProcess child(ChildSpec{"connect_probe", {KVCHAOS_CONNECT_PROBE, std::to_string(port)}, log, SIGKILL, env});
  EXPECT_TRUE(child.Start().ok());
  for (int i = 0; i < 1000 && child.Running(); ++i) ::usleep(10'000);
  *exit_code = child.ExitDescription() == "exited with 0" ? 0 : -1;
  return child.ExitDescription() + ": " + ReadFile(log);
}

TEST(ConnectPreloadTest, AMappedPortReachesItsProxyAndOthersPassUnchanged) {
  Result<std::string> preload = FindConnectPreload();
  ASSERT_TRUE(preload.ok()) << preload.status().message();
  kvchaos::testing::TempDir dir("connect-preload");
  Listener server, proxy, other;
  std::vector<std::string> env;
  AddConnectRedirects(env, *preload, {{server.port(), proxy.port()}});
  int code = 0;
  const std::string mapped = RunProbe(dir.str(), server.port(), env, &code);
  EXPECT_EQ(code, 0) << mapped;
  EXPECT_EQ(proxy.Take(), "probe") << "the connection to the mapped port should reach its proxy";
  EXPECT_EQ(server.Take(), "") << "the mapped server should never be called directly";
  const std::string unmapped = RunProbe(dir.str(), other.port(), env, &code);
  EXPECT_EQ(code, 0) << unmapped;
  EXPECT_EQ(other.Take(), "probe") << "a port the map does not name should be called as it is";
  EXPECT_EQ(proxy.Take(), "");
}

TEST(ConnectPreloadTest, AMalformedMapStopsTheProcessNamingTheVariable) {
  Result<std::string> preload = FindConnectPreload();
  ASSERT_TRUE(preload.ok()) << preload.status().message();
  kvchaos::testing::TempDir dir("connect-preload");
  Listener server;
  for (const char* bad : {"127.0.0.1:1", "127.0.0.1:1=localhost:2", "127.0.0.1:1=127.0.0.1:70000"}) {
    int code = 0;
    const std::string out =
        RunProbe(dir.str(), server.port(), {"LD_PRELOAD=" + *preload, std::string("KVCHAOS_CONNECT_MAP=") + bad}, &code);
    EXPECT_THAT(out, HasSubstr("exited with 70")) << "map '" << bad << "' should stop the child at load";
    EXPECT_THAT(out, HasSubstr("KVCHAOS_CONNECT_MAP")) << out;
    EXPECT_THAT(out, HasSubstr(bad)) << "the message should quote the map";
  }
  EXPECT_EQ(server.Take(), "") << "a child with a bad map must not connect anywhere";
}

// A node with clock faults and a sentinel partition runs under both preloads: one LD_PRELOAD
// naming both (and the runner's own after them), one ASAN_OPTIONS.
TEST(ConnectPreloadTest, BothPreloadsShareOneLdPreloadEntry) {
  ::setenv("LD_PRELOAD", "/lib/outer.so", 1);
  std::vector<std::string> env{"KVCHAOS_CLOCK_FILE=/x"};
  AddPreload(env, "/lib/clock.so");
  AddConnectRedirects(env, "/lib/connect.so", {{1000, 2000}, {1001, 2001}});
  ::unsetenv("LD_PRELOAD");
  EXPECT_THAT(env, ::testing::Contains("LD_PRELOAD=/lib/connect.so:/lib/clock.so:/lib/outer.so"));
  EXPECT_THAT(env, ::testing::Contains("KVCHAOS_CONNECT_MAP=127.0.0.1:1000=127.0.0.1:2000,127.0.0.1:1001=127.0.0.1:2001"));
  EXPECT_EQ(std::count_if(env.begin(), env.end(), [](const std::string& e) { return e.rfind("LD_PRELOAD=", 0) == 0; }), 1)
      << "a second LD_PRELOAD entry would replace the first in the child's environment";
  EXPECT_EQ(std::count_if(env.begin(), env.end(), [](const std::string& e) { return e.rfind("ASAN_OPTIONS=", 0) == 0; }), 1);
}

}  // namespace
}  // namespace kvchaos::harness::real
