// Real mode's parts that can be checked without a whole run: the child supervisor (logs, exit
// descriptions, stop with grace), where the faultfs binary is looked for, the failover events and
// dual-acting windows derived from observed spans, and the load-time refusal of sim-only actions.
// Whole runs (redis-server + nodes + faultfs) are the scenarios.ci_real and real_mode_sigint
// CTests.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <mutex>
#include <thread>
#include <vector>

#include "harness/real/child_process.h"
#include "harness/real/fake_clock.h"
#include "harness/real/faultfs_mount.h"
#include "harness/real/observer.h"
#include "harness/real/link_proxy.h"
#include "harness/real_mode.h"
#include "harness/tests/scenario_test_util.h"

namespace kvchaos::harness {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class TempDirectory {
 public:
  TempDirectory() {
    std::string templ = (fs::temp_directory_path() / "kvchaos-real-test-XXXXXX").string();
    path_ = ::mkdtemp(templ.data()) ? templ : "";
  }
  ~TempDirectory() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ChildProcessTest, LogsOutputAndStopsWithTheGivenSignal) {
  TempDirectory dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string log = dir.path() + "/child.log";
  real::ChildProcess child({"sleeper", {"/bin/sh", "-c", "echo started; echo oops >&2; exec sleep 30"}, log, SIGKILL});
  ASSERT_TRUE(child.Start().ok());
  EXPECT_TRUE(child.Running());
  EXPECT_FALSE(child.Start().ok()) << "a running child must not be started twice";
  for (int i = 0; i < 200 && ReadFile(log).find("oops") == std::string::npos; ++i) {
    Runtime::Real().SleepFor(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(ReadFile(log), HasSubstr("started")) << "stdout must go to the log";
  EXPECT_THAT(ReadFile(log), HasSubstr("oops")) << "stderr must go to the log";
  child.Stop(SIGTERM, std::chrono::seconds(5));
  EXPECT_FALSE(child.Running());
  EXPECT_EQ(child.ExitDescription(), "killed by signal 15");
}

TEST(ChildProcessTest, ExecFailureIsExit127AndRestartAppendsToTheLog) {
  TempDirectory dir;
  const std::string log = dir.path() + "/child.log";
  real::ChildProcess missing({"missing", {dir.path() + "/no-such-binary"}, log, SIGKILL});
  ASSERT_TRUE(missing.Start().ok());
  for (int i = 0; i < 500 && missing.Running(); ++i) Runtime::Real().SleepFor(std::chrono::milliseconds(10));
  EXPECT_EQ(missing.ExitDescription(), "exited with 127");

  real::ChildProcess echo({"echo", {"/bin/sh", "-c", "echo line"}, log, SIGKILL});
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(echo.Start().ok());
    for (int i = 0; i < 500 && echo.Running(); ++i) Runtime::Real().SleepFor(std::chrono::milliseconds(10));
    EXPECT_EQ(echo.ExitDescription(), "exited with 0");
  }
  const std::string text = ReadFile(log);
  EXPECT_EQ(text, "line\nline\n") << "a restarted child appends to its log";
}

TEST(ChildProcessTest, DiesWhenTheThreadThatStartedItEnds) {
  // PR_SET_PDEATHSIG: the kernel signals the child when the forking thread exits (here a thread;
  // for `kvchaos run`, the run's thread or the whole runner, even when SIGKILLed).
  TempDirectory dir;
  pid_t pid = -1;
  auto* child = new real::ChildProcess({"orphan", {"/bin/sh", "-c", "exec sleep 30"}, dir.path() + "/o.log", SIGKILL});
  std::thread starter([&] {
    ASSERT_TRUE(child->Start().ok());
    pid = child->pid();
    // The child sets PR_SET_PDEATHSIG right after fork; a thread that ended before that would
    // leave it without one (the runner's run thread lives for the whole run).
    Runtime::Real().SleepFor(std::chrono::milliseconds(300));
  });
  starter.join();
  ASSERT_GT(pid, 0);
  bool died = false;
  for (int i = 0; i < 300 && !died; ++i) {
    died = !child->Running();
    if (!died) Runtime::Real().SleepFor(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(died) << "the child outlived the thread that started it";
  EXPECT_EQ(child->ExitDescription(), "killed by signal 9");
  delete child;
}

TEST(FaultfsMountTest, AMissingBinaryIsNamed) {
  Result<std::string> r = real::FindFaultfs("/nonexistent/faultfs");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("--faultfs /nonexistent/faultfs"));
  EXPECT_FALSE(real::IsMountPoint("/nonexistent/mnt"));
  EXPECT_TRUE(real::IsMountPoint("/")) << "/ is always a mount point";
}

// A loopback echo server standing in for Redis: echoes on every connection, counts the bytes it
// received.
class EchoServer {
 public:
  EchoServer() {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_, 4);
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] {
      for (int fd; !stop_ && (fd = ::accept(listen_, nullptr, nullptr)) >= 0;) {
        std::lock_guard<std::mutex> lock(mu_);
        fds_.push_back(fd);
        echoers_.emplace_back([this, fd] {
          char buf[256];
          for (ssize_t n; !stop_ && (n = ::read(fd, buf, sizeof buf)) > 0;) {
            received_ += static_cast<int>(n);
            if (::write(fd, buf, static_cast<size_t>(n)) != n) break;
          }
        });
      }
    });
  }
  ~EchoServer() {
    stop_ = true;
    ::shutdown(listen_, SHUT_RDWR);
    acceptor_.join();
    ::close(listen_);
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    for (std::thread& t : echoers_) t.join();
    for (int fd : fds_) ::close(fd);
  }
  int port() const { return port_; }
  int received() const { return received_; }

 private:
  int listen_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> received_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> fds_;
  std::vector<std::thread> echoers_;
};

int ConnectLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 ? fd : -1;
}

// What arrives on `fd` within `wait_ms` ("" when nothing).
std::string ReadWithin(int fd, int wait_ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, wait_ms) != 1) return "";
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// A LinkProxy in front of an echo server standing in for Redis, with one connection through it.
class LinkProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(proxy_.Start().ok());
    fd_ = ConnectLoopback(proxy_.port());
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
    proxy_.Stop();
  }
  EchoServer redis_;
  real::LinkProxy proxy_{"node-0", redis_.port()};
  int fd_ = -1;
};

TEST_F(LinkProxyTest, PartitionsHoldBytesPerDirectionAndHealDeliversThem) {
  ASSERT_EQ(::write(fd_, "a", 1), 1);
  EXPECT_EQ(ReadWithin(fd_, 2000), "a") << "an unpartitioned proxy relays both ways";

  proxy_.Block(true, true);
  ASSERT_EQ(::write(fd_, "b", 1), 1);
  EXPECT_EQ(ReadWithin(fd_, 300), "") << "a partitioned node must get no answer";
  EXPECT_EQ(redis_.received(), 1) << "a node partitioned both ways must not reach Redis";
  proxy_.Heal();
  EXPECT_EQ(ReadWithin(fd_, 2000), "b") << "held bytes are delivered after the heal, not dropped";

  proxy_.Block(false, true);  // inbound only: commands arrive, answers do not
  ASSERT_EQ(::write(fd_, "c", 1), 1);
  for (int i = 0; i < 200 && redis_.received() < 3; ++i) Runtime::Real().SleepFor(std::chrono::milliseconds(10));
  EXPECT_EQ(redis_.received(), 3) << "an inbound-only partition still lets the node's commands through";
  EXPECT_EQ(ReadWithin(fd_, 300), "") << "but not Redis's answers";
  proxy_.Heal();
  EXPECT_EQ(ReadWithin(fd_, 2000), "c");
}

// The network fault on a node's link: bytes wait the delay (never less), loss makes them later
// (TCP's retransmission), never missing nor out of order, and the heal restores a prompt link.
TEST_F(LinkProxyTest, ADegradedLinkDelaysBytesInOrderAndLossMakesThemLateNotMissing) {
  proxy_.Degrade(real::LinkQuality{.delay = std::chrono::milliseconds(400)}, real::LinkQuality{}, 1);
  ASSERT_EQ(::write(fd_, "a", 1), 1);
  EXPECT_EQ(ReadWithin(fd_, 150), "") << "a 400 ms delay on the way to Redis let the bytes through sooner";
  EXPECT_EQ(ReadWithin(fd_, 5000), "a") << "delayed bytes must arrive";

  const real::LinkQuality lossy{.delay = std::chrono::milliseconds(5), .loss = 0.3};
  proxy_.Degrade(lossy, lossy, 7);
  std::string sent;
  for (char c = 'A'; c <= 'T'; ++c) {
    ASSERT_EQ(::write(fd_, &c, 1), 1);
    sent += c;
    Runtime::Real().SleepFor(std::chrono::milliseconds(2));
  }
  std::string got;
  for (int i = 0; i < 600 && got.size() < sent.size(); ++i) got += ReadWithin(fd_, 100);
  EXPECT_EQ(got, sent) << "loss over TCP must delay bytes, never drop or reorder them";

  // What a node sent before it closed still arrives (a renewal sent into the slow link, say).
  proxy_.Degrade(real::LinkQuality{.delay = std::chrono::milliseconds(300)}, real::LinkQuality{}, 3);
  const int before = redis_.received();
  const int closing = ConnectLoopback(proxy_.port());
  ASSERT_GE(closing, 0);
  ASSERT_EQ(::write(closing, "q", 1), 1);
  ::close(closing);
  for (int i = 0; i < 300 && redis_.received() == before; ++i) Runtime::Real().SleepFor(std::chrono::milliseconds(10));
  EXPECT_EQ(redis_.received(), before + 1) << "bytes a node sent before closing were dropped by the slow link";

  proxy_.Heal();
  ASSERT_EQ(::write(fd_, "z", 1), 1);
  EXPECT_EQ(ReadWithin(fd_, 2000), "z") << "a healed link relays at once";
}

// Jitter varies each read's delay but never reorders; a bandwidth cap spaces the bytes out at its
// rate (here 20 KiB at 40 KiB/s: half a second at least, where the loopback takes microseconds).
TEST_F(LinkProxyTest, JitterKeepsOrderAndABandwidthCapSpacesBytesAtItsRate) {
  proxy_.Degrade(real::LinkQuality{.delay = std::chrono::milliseconds(20), .jitter = std::chrono::milliseconds(60)},
                real::LinkQuality{}, 5);
  std::string sent;
  for (char c = 'a'; c <= 'p'; ++c) {
    ASSERT_EQ(::write(fd_, &c, 1), 1);
    sent += c;
    Runtime::Real().SleepFor(std::chrono::milliseconds(3));
  }
  std::string got;
  for (int i = 0; i < 300 && got.size() < sent.size(); ++i) got += ReadWithin(fd_, 100);
  EXPECT_EQ(got, sent) << "jitter must not reorder a TCP stream";

  constexpr uint64_t kRate = 40 * 1024;
  proxy_.Degrade(real::LinkQuality{.bandwidth = kRate}, real::LinkQuality{}, 6);
  const int before = redis_.received();
  const std::string block(20 * 1024, 'x');
  const MonoTime start = Runtime::Real().Now();
  size_t written = 0;
  while (written < block.size()) {
    const ssize_t n = ::write(fd_, block.data() + written, block.size() - written);
    ASSERT_GT(n, 0);
    written += static_cast<size_t>(n);
  }
  for (int i = 0; i < 500 && redis_.received() < before + static_cast<int>(block.size()); ++i) {
    Runtime::Real().SleepFor(std::chrono::milliseconds(10));
  }
  const int64_t took_ms = ToMillis(Runtime::Real().Now() - start);
  EXPECT_EQ(redis_.received(), before + static_cast<int>(block.size())) << "a throttled link must deliver every byte";
  EXPECT_GE(took_ms, 450) << "20 KiB through a 40 KiB/s cap reached Redis in " << took_ms << " ms";
  proxy_.Heal();
}

// A reset partition: the open connection is reset at once (the node's call fails, no timeout),
// every new one is reset while it lasts, and after it connections work again.
TEST_F(LinkProxyTest, AResetPartitionResetsOpenAndNewConnectionsUntilItEnds) {
  ASSERT_EQ(::write(fd_, "a", 1), 1);
  EXPECT_EQ(ReadWithin(fd_, 2000), "a");

  proxy_.Reset(true);
  auto reset_within = [](int s, int wait_ms) {
    pollfd p{s, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) != 1) return false;
    char c;
    return ::read(s, &c, 1) < 0 && errno == ECONNRESET;
  };
  EXPECT_TRUE(reset_within(fd_, 2000)) << "an open connection must be reset when the partition starts";
  const int during = ConnectLoopback(proxy_.port());
  ASSERT_GE(during, 0);
  EXPECT_TRUE(reset_within(during, 2000)) << "a connection made during a reset partition must be reset";
  proxy_.Reset(false);
  const int after = ConnectLoopback(proxy_.port());
  ASSERT_GE(after, 0);
  ASSERT_EQ(::write(after, "b", 1), 1);
  EXPECT_EQ(ReadWithin(after, 2000), "b") << "after the partition new connections must work";
  ::close(during);
  ::close(after);
}

// The checks real mode runs for a 3 s lease: the observer's sightings lag by up to 60 ms.
const sim::FailoverCheckOptions kLease3s{3'000'000'000, 200'000'000, 60'000'000};
// A coordination outage: what is sent while it lasts is lost both ways, the connection that carried
// it stays dead after the outage, and a connection opened afterwards works.
TEST_F(LinkProxyTest, ASeveredConnectionLosesWhatItCarriesAndStaysDeadAfterTheOutage) {
  ASSERT_EQ(::write(fd_, "a", 1), 1);
  EXPECT_EQ(ReadWithin(fd_, 2000), "a");

  proxy_.Sever(true);
  Runtime::Real().SleepFor(std::chrono::milliseconds(100));  // the proxy's loop sees it
  ASSERT_EQ(::write(fd_, "b", 1), 1);
  EXPECT_EQ(ReadWithin(fd_, 300), "") << "a request sent into the outage must get no answer";
  const int during = ConnectLoopback(proxy_.port());
  ASSERT_GE(during, 0) << "connections are still accepted (as the kernel completes handshakes)";
  ASSERT_EQ(::write(during, "c", 1), 1);
  EXPECT_EQ(ReadWithin(during, 300), "");
  proxy_.Sever(false);
  EXPECT_EQ(ReadWithin(fd_, 300), "") << "the request sent into the outage was lost, not held";
  ASSERT_EQ(::write(fd_, "d", 1), 1);
  EXPECT_EQ(ReadWithin(fd_, 300), "") << "a connection that was open during the outage stays dead";
  EXPECT_EQ(ReadWithin(during, 300), "");
  EXPECT_EQ(redis_.received(), 1) << "nothing sent into the outage, or on a dead connection, reached Redis";

  const int after = ConnectLoopback(proxy_.port());
  ASSERT_GE(after, 0);
  ASSERT_EQ(::write(after, "e", 1), 1);
  EXPECT_EQ(ReadWithin(after, 2000), "e") << "a connection opened after the outage works";
  ::close(during);
  ::close(after);
}

// Spans as the observer records them: node 0 acts until 1000 ms, is crashed at 1005 ms; node 1
// takes the lock at 3990 ms and serves from 4000 ms.
TEST(BuildFailoversTest, NamesTheCauseAndTimesTheHandover) {
  std::vector<real::ActingSpan> spans = {{0, 1, 0, 1000}, {1, 2, 4000, 9000}};
  std::vector<real::Acquisition> acquisitions = {{10, 0, 1}, {3990, 1, 2}};
  std::vector<real::FaultMark> faults = {{"leader-crash", 1005, 7000, 0, true, sim::FaultScope::kNodeProcess}};
  int64_t windows = -1;
  double overlap = -1;
  auto events = real::BuildFailovers(spans, acquisitions, faults, kLease3s, &windows, &overlap);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fault_class, "leader-crash");
  EXPECT_EQ(events[0].old_leader, 0);
  EXPECT_EQ(events[0].new_leader, 1);
  EXPECT_DOUBLE_EQ(events[0].failover_ms(), 2995);
  EXPECT_EQ(events[0].old_leader_stopped_ms, 1005) << "a crash stops the old leader when it hits";
  EXPECT_EQ(events[0].lock_acquired_ms, 3990);
  EXPECT_FALSE(events[0].unnecessary);
  EXPECT_EQ(windows, 0);
}

TEST(BuildFailoversTest, AHandoverWithoutAFaultIsUnnecessaryAndTheSameTermIsNone) {
  // Node 0 is seen again with the same token after a gap (a slow poll): no failover. Then node 1
  // takes over with no fault anywhere near: an unnecessary failover.
  std::vector<real::ActingSpan> spans = {{0, 5, 0, 1000}, {0, 5, 1100, 2000}, {1, 6, 5000, 6000}};
  int64_t windows = 0;
  double overlap = 0;
  auto events = real::BuildFailovers(spans, {}, {{"pause", 100, 200, 2, true, sim::FaultScope::kNodeProcess}}, kLease3s,
                                     &windows, &overlap);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fault_class, "none");
  EXPECT_TRUE(events[0].unnecessary);
  EXPECT_EQ(events[0].fault_at_ms, 2000);
}

TEST(BuildFailoversTest, OverlappingActingSpansOfTwoNodesAreDualActing) {
  std::vector<real::ActingSpan> spans = {{0, 1, 0, 5000}, {1, 2, 4800, 9000}};
  int64_t windows = 0;
  double overlap = 0;
  real::BuildFailovers(spans, {}, {}, kLease3s, &windows, &overlap);
  EXPECT_EQ(windows, 1);
  EXPECT_DOUBLE_EQ(overlap, 200);
}

// The rolling-restart false alarm: a node polled as a follower (old term 1) and promoted (term 3)
// before its probe. Judged by the polled token its write looked stale; by its session's it is not.
TEST(FenceOrderCheckTest, OnlyAWriteUnderALowerTermAfterAHigherOneIsStale) {
  real::FenceOrderCheck check;
  EXPECT_FALSE(check.Acknowledged(1));
  EXPECT_FALSE(check.Acknowledged(2)) << "a new term's first write";
  EXPECT_FALSE(check.Acknowledged(2)) << "the same term again";
  EXPECT_FALSE(check.Acknowledged(3));
  EXPECT_TRUE(check.Acknowledged(2)) << "term 2 acknowledged after term 3: the fence let a deposed leader write";
  EXPECT_FALSE(check.Acknowledged(3)) << "a stale write does not lower the newest term";
}

TEST(RealModeChecksTest, SimOnlyActionsAreRefusedAtLoadWithTheirLine) {
  const std::string slow = testing::ErrorOf(
      testing::RealBase() + "faults:\n  - {at: 10s, for: 5s, action: slow, node: 0, wakeup_delay: 10ms}\n", "r.yaml");
  EXPECT_THAT(slow, HasSubstr("r.yaml:15: faults[0].action: slow needs the simulator: it is sim-only")) << slow;
  // Node clocks move in real mode (a preload per node process); the coordination server's clock does not.
  for (const char* fault : {"clock-drift, node: coordination, ppm: 100", "clock-jump, node: coordination, by: +1s"}) {
    const std::string error =
        testing::ErrorOf(testing::RealBase() + "faults:\n  - {at: 10s, action: " + fault + "}\n", "r.yaml");
    EXPECT_THAT(error, HasSubstr("r.yaml:15: faults[0].node: ")) << error;
    EXPECT_THAT(error, HasSubstr("on coordination needs the simulator: real mode moves node clocks only")) << error;
  }
  for (const char* fault : {"clock-drift, node: leader, ppm: -2000, for: 5s", "clock-jump, node: follower, by: -5s"}) {
    Result<Scenario> loaded = ParseScenario(testing::RealBase() + "faults:\n  - {at: 10s, action: " + fault + "}\n", "r.yaml");
    EXPECT_TRUE(loaded.ok()) << fault << ": " << loaded.status().ToString();
  }
  std::string file = testing::RealBase();
  file.replace(file.find("coordination: redis"), 19, "coordination: file");
  EXPECT_THAT(testing::ErrorOf(file + "faults:\n  - {at: 10s, for: 5s, action: partition, node: leader}\n", "r.yaml"),
              HasSubstr("r.yaml:15: faults[0].action: partition in real mode cuts a node's connections to coordination"));
  EXPECT_THAT(testing::ErrorOf(testing::RealBase() + "faults:\n  - {at: 10s, for: 5s, action: network, node: 0, duplication: 0.1}\n", "r.yaml"),
              HasSubstr("r.yaml:15: faults[0].duplication: real mode's network runs over TCP"));
  EXPECT_THAT(testing::ErrorOf(file + "faults:\n  - {at: 10s, for: 5s, action: network, node: 0, delay: 50ms}\n", "r.yaml"),
              HasSubstr("faults[0].action: network in real mode cuts a node's connections to coordination"));
  EXPECT_TRUE(ParseScenario(testing::RealBase() + "faults:\n  - {at: 10s, for: 5s, action: network, node: leader, loss: 0.2, delay: 50ms}\n", "r.yaml").ok())
      << "a network fault on the link to Redis runs in real mode";
}

TEST(RealModeTest, AMissingFaultfsBinaryFailsTheRunWithWhereItLooked) {
  Result<Scenario> s = ParseScenario(testing::RealBase() + "faults: []\n", "r.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  SetRealModeOptions({"/nonexistent/faultfs", ""});
  EXPECT_THAT(RealModeMissing(*s), HasSubstr("--faultfs /nonexistent/faultfs: not an executable file"));
  const RunResult r = RunRealScenario(*s, 1);
  SetRealModeOptions({});
  EXPECT_FALSE(r.passed());
  EXPECT_THAT(r.error, HasSubstr("real mode cannot run here"));
  EXPECT_THAT(r.error, HasSubstr("/nonexistent/faultfs"));
}

// Clock faults without the clock preload are refused with what to build, never run unfaked.
TEST(RealModeTest, ClockFaultsWithoutTheClockPreloadFailTheRunNamingIt) {
  Result<Scenario> clock = ParseScenario(testing::RealBase() + "faults:\n  - {at: 1s, action: clock-jump, node: 0, by: +5s}\n", "r.yaml");
  ASSERT_TRUE(clock.ok()) << clock.status().ToString();
  Result<Scenario> none = ParseScenario(testing::RealBase() + "faults: []\n", "r.yaml");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  ::setenv("KVCHAOS_CLOCK_PRELOAD", "/nonexistent/libkvchaos_clock_preload.so", 1);
  const std::string missing = RealModeMissing(*clock);
  const RunResult r = RunRealScenario(*clock, 1);
  const std::string missing_without_clock_faults = RealModeMissing(*none);
  ::unsetenv("KVCHAOS_CLOCK_PRELOAD");
  EXPECT_THAT(missing, HasSubstr("KVCHAOS_CLOCK_PRELOAD=/nonexistent/libkvchaos_clock_preload.so is not a readable file"));
  EXPECT_FALSE(r.passed());
  EXPECT_THAT(r.error, HasSubstr("real mode cannot run here"));
  EXPECT_EQ(missing_without_clock_faults.find("clock preload"), std::string::npos)
      << "a run without clock faults does not need the clock preload: " << missing_without_clock_faults;
  ::setenv("KVCHAOS_CLOCK_PRELOAD", "", 1);  // empty: the usual places, as if unset
  const Result<std::string> found = real::FindClockPreload();
  ::unsetenv("KVCHAOS_CLOCK_PRELOAD");
  EXPECT_TRUE(found.ok()) << "this build's library is found: " << found.status().message();
}

TEST(RealModeTest, AStopRequestEndsRunsBeforeTheyStart) {
  Result<Scenario> s = ParseScenario(testing::RealBase() + "faults: []\n", "r.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  RequestRealModeStop();
  const RunResult r = RunRealScenario(*s, 1);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.mode, "real");
  EXPECT_THAT(r.error, HasSubstr("interrupted"));
}

}  // namespace
}  // namespace kvchaos::harness
