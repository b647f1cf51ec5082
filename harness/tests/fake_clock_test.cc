// Real mode's clock faults (harness/real/fake_clock.h): the control lines libfaketime reads for an
// offset, a jump and a drift, the file a node's process starts with, and a child process under
// the preload whose wall clock jumps and drifts when its file is rewritten while its monotonic
// clock and the machine's clock keep true time.
#include "harness/real/fake_clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "harness/real/child_process.h"
#include "testing/temp_dir.h"

namespace kvchaos::harness::real {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(FaketimeControlLineTest, OffsetsAndRatesAreWrittenAsLibfaketimeReadsThem) {
  EXPECT_EQ(FaketimeControlLine(0s, 1.0), "+0.000000000 x1.000000000");
  EXPECT_EQ(FaketimeControlLine(5s, 1.0), "+5.000000000 x1.000000000");
  EXPECT_EQ(FaketimeControlLine(-5500ms, 1.0), "-5.500000000 x1.000000000") << "a negative offset keeps its fraction";
  EXPECT_EQ(FaketimeControlLine(1ns, 0.998), "+0.000000001 x0.998000000");
  // libfaketime multiplies the offset by 60 when the line holds an 'm' (and so on for h, d, y).
  for (const std::string& line : {FaketimeControlLine(-3h, 1.5), FaketimeControlLine(123456789ns, 1.002)}) {
    EXPECT_EQ(line.find_first_of("mhdy"), std::string::npos) << line;
  }
}

TEST(FakeClockModelTest, AJumpMovesTheOffsetAndADriftKeepsTheClockContinuous) {
  const MonoTime t0{};
  FakeClockModel m;
  EXPECT_EQ(m.ControlLine(t0), "+0.000000000 x1.000000000");
  m.Jump(t0 + 10s, 5s);
  EXPECT_EQ(m.OffsetAt(t0 + 20s), Duration(5s));
  m.SetRate(t0 + 20s, 1.002);  // 2000 ppm fast from 20 s on
  EXPECT_EQ(m.OffsetAt(t0 + 20s), Duration(5s)) << "a rate change must not step the clock";
  EXPECT_EQ(m.OffsetAt(t0 + 120s), Duration(5200ms)) << "100 s at +2000 ppm gain 200 ms";
  m.SetRate(t0 + 120s, 1.0);  // the drift's window ends: the time gained stays
  EXPECT_EQ(m.OffsetAt(t0 + 500s), Duration(5200ms));
  m.Jump(t0 + 500s, -7s);
  EXPECT_EQ(m.OffsetAt(t0 + 501s), Duration(-1800ms));
}

TEST(FakeClockModelTest, TheLineIsForTheProcessStartSoARestartedNodeKeepsItsClock) {
  // libfaketime scales the time since the process loaded it: a process started at 100 s under a
  // 0.5x clock set at 0 s must start 50 s behind and keep the rate.
  const MonoTime t0{};
  FakeClockModel m;
  m.SetRate(t0, 0.5);
  EXPECT_EQ(m.ControlLine(t0), "+0.000000000 x0.500000000");
  EXPECT_EQ(m.ControlLine(t0 + 100s), "-50.000000000 x0.500000000");
}

TEST(NodeClocksTest, EachNodeGetsItsOwnControlFileAndThePreload) {
  kvchaos::testing::TempDir dir;
  NodeClocks clocks("/lib/libfaketimeMT.so.1", dir.str(), 2);
  const MonoTime now = Runtime::Real().Now();
  ASSERT_TRUE(clocks.ProcessStarting(0, now).ok());
  ASSERT_TRUE(clocks.ProcessStarting(1, now).ok());
  ASSERT_TRUE(clocks.Jump(1, now, 5s).ok());
  EXPECT_THAT(ReadFile(clocks.ControlPath(0)), HasSubstr("\n+0.000000000 x1.000000000\n"));
  EXPECT_THAT(ReadFile(clocks.ControlPath(1)), HasSubstr("\n+5.000000000 x1.000000000\n")) << "node 1 jumped, node 0 did not";
  ASSERT_TRUE(clocks.SetDriftPpm(0, now, -2000).ok());
  EXPECT_THAT(ReadFile(clocks.ControlPath(0)), HasSubstr("x0.998000000\n"));
  EXPECT_FALSE(std::filesystem::exists(clocks.ControlPath(0) + ".tmp")) << "the temporary file is renamed over the file";
  const std::vector<std::string> env = clocks.Env(1);
  EXPECT_THAT(env, ::testing::Contains(::testing::StartsWith("LD_PRELOAD=/lib/libfaketimeMT.so.1")));
  EXPECT_THAT(env, ::testing::Contains("FAKETIME_TIMESTAMP_FILE=" + clocks.ControlPath(1)));
  EXPECT_THAT(env, ::testing::Contains("FAKETIME_NO_CACHE=1")) << "without it a rewrite takes up to 10 s to act";
  EXPECT_THAT(env, ::testing::Contains("FAKETIME_DONT_FAKE_MONOTONIC=1"));
}

TEST(FindLibfaketimeTest, AMissingOverrideNamesTheVariable) {
  ::setenv("KVCHAOS_LIBFAKETIME", "/nonexistent/libfaketime.so.1", 1);
  Result<std::string> found = FindLibfaketime();
  ::unsetenv("KVCHAOS_LIBFAKETIME");
  ASSERT_FALSE(found.ok());
  EXPECT_THAT(found.status().message(), HasSubstr("KVCHAOS_LIBFAKETIME=/nonexistent/libfaketime.so.1"));
}

// One line of clock_probe: both clocks of the child, in nanoseconds.
struct Sample {
  long long steady_ns = 0;
  long long wall_ns = 0;
};

// The probe's newest line, some lines after the moment of the call (waits up to 2 s for one).
std::optional<Sample> SampleAfter(const std::string& log) {
  const auto asked = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(60ms);  // several lines after the moment asked
  while (std::chrono::steady_clock::now() - asked < 2s) {
    std::ifstream f(log);
    std::string line, last;
    while (std::getline(f, line)) {
      if (!line.empty()) last = line;
    }
    Sample s;
    if (std::sscanf(last.c_str(), "%lld %lld", &s.steady_ns, &s.wall_ns) == 2) return s;
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

double Seconds(long long ns) { return static_cast<double>(ns) / 1e9; }

TEST(FakeClockProcessTest, AChildUnderThePreloadSeesItsWallClockJumpAndDriftButNotItsMonotonicClock) {
  Result<std::string> lib = FindLibfaketime();
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  kvchaos::testing::TempDir dir;
  NodeClocks clocks(*lib, dir.str(), 1);
  ASSERT_TRUE(clocks.ProcessStarting(0, Runtime::Real().Now()).ok());
  ChildProcess probe(ChildSpec{"clock-probe", {KVCHAOS_CLOCK_PROBE}, dir.str() + "/probe.log", SIGKILL, clocks.Env(0)});
  ASSERT_TRUE(probe.Start().ok());

  const std::optional<Sample> a = SampleAfter(dir.str() + "/probe.log");
  ASSERT_TRUE(a) << "clock_probe printed nothing (log: " << ReadFile(dir.str() + "/probe.log") << ")";
  const long long true_wall_a = std::chrono::nanoseconds(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LT(std::abs(Seconds(a->wall_ns - true_wall_a)), 1.0) << "before any fault the child's wall clock is true";

  // A jump: +1 h on the wall clock at once; the monotonic clock keeps true time.
  ASSERT_TRUE(clocks.Jump(0, Runtime::Real().Now(), 3600s).ok());
  const std::optional<Sample> b = SampleAfter(dir.str() + "/probe.log");
  ASSERT_TRUE(b);
  const double stepped = Seconds((b->wall_ns - a->wall_ns) - (b->steady_ns - a->steady_ns));
  EXPECT_NEAR(stepped, 3600.0, 0.5) << "the child's wall clock did not jump by the 3600 s written to its file";
  const long long true_wall_b = std::chrono::nanoseconds(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LT(std::abs(Seconds(true_wall_b - true_wall_a) - Seconds(b->steady_ns - a->steady_ns)), 1.0)
      << "the machine's clock must not move; the child's monotonic clock keeps true time";

  // A drift: the wall clock runs at 1.5x from here on, continuous where the rate changed.
  ASSERT_TRUE(clocks.SetDriftPpm(0, Runtime::Real().Now(), 500000).ok());
  const std::optional<Sample> c = SampleAfter(dir.str() + "/probe.log");
  ASSERT_TRUE(c);
  EXPECT_NEAR(Seconds(c->wall_ns - b->wall_ns), Seconds(c->steady_ns - b->steady_ns), 0.2)
      << "setting a rate must not step the clock (the time so far is folded into the offset)";
  std::this_thread::sleep_for(1s);
  const std::optional<Sample> d = SampleAfter(dir.str() + "/probe.log");
  ASSERT_TRUE(d);
  const double rate = static_cast<double>(d->wall_ns - c->wall_ns) / static_cast<double>(d->steady_ns - c->steady_ns);
  EXPECT_NEAR(rate, 1.5, 0.05) << "the child's wall clock should run at 1.5x its monotonic clock";
  probe.Kill();
}

}  // namespace
}  // namespace kvchaos::harness::real
