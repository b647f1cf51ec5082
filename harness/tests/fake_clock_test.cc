// Real mode's clock faults (harness/real/fake_clock.h): the model (the simulator's: a jump steps the
// wall clock, a drift scales both), the clock file a node's process reads, and a child process
// under the clock preload whose clocks jump and drift when its file is rewritten (monotonic never
// back, the machine's clock untouched) and whose waits end at its own clock's deadlines, also when
// the file changes mid-wait.
#include "harness/real/fake_clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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

TEST(FakeClockModelTest, AJumpStepsTheWallClockOnlyAndADriftMovesBothContinuously) {
  const MonoTime t0{};
  FakeClockModel m;
  EXPECT_EQ(m.FileLine(), "ref_ns=0 gain_ns=0 drift_ppb=0 wall_step_ns=0");
  m.Jump(t0 + 10s, 5s);
  EXPECT_EQ(m.WallOffsetAt(t0 + 20s), Duration(5s));
  EXPECT_EQ(m.MonoOffsetAt(t0 + 20s), Duration(0s)) << "a jump must not move the monotonic clock";
  m.SetRate(t0 + 20s, 1.002);  // 2000 ppm fast from 20 s on
  EXPECT_EQ(m.WallOffsetAt(t0 + 20s), Duration(5s)) << "a rate change must not step the clock";
  EXPECT_EQ(m.MonoOffsetAt(t0 + 120s), Duration(200ms)) << "100 s at +2000 ppm gain 200 ms on the monotonic clock";
  EXPECT_EQ(m.WallOffsetAt(t0 + 120s), Duration(5200ms)) << "and the wall clock gains them too";
  m.SetRate(t0 + 120s, 1.0);  // the drift's window ends: the time gained stays
  EXPECT_EQ(m.MonoOffsetAt(t0 + 500s), Duration(200ms));
  m.Jump(t0 + 500s, -7s);
  EXPECT_EQ(m.WallOffsetAt(t0 + 501s), Duration(-1800ms));
  EXPECT_EQ(m.MonoOffsetAt(t0 + 501s), Duration(200ms)) << "a backward jump must not move the monotonic clock back";
  EXPECT_EQ(m.FileLine(), "ref_ns=120000000000 gain_ns=200000000 drift_ppb=0 wall_step_ns=-2000000000");
}

TEST(FakeClockModelTest, ASlowClockRoundsDownAsTheSimulatorDoes) {
  const MonoTime t0{};
  FakeClockModel m;
  m.SetRate(t0, 1.0 - 3e-9);  // -3 ppb
  EXPECT_EQ(m.FileLine(), "ref_ns=0 gain_ns=0 drift_ppb=-3 wall_step_ns=0");
  EXPECT_EQ(m.MonoOffsetAt(t0 + 1ns), Duration(-1ns)) << "floor(-3e-9): the preload's arithmetic";
  EXPECT_EQ(m.MonoOffsetAt(t0 + 1s), Duration(-3ns));
}

TEST(NodeClocksTest, EachNodeGetsItsOwnClockFileAndThePreload) {
  kvchaos::testing::TempDir dir;
  NodeClocks clocks("/lib/libkvchaos_clock_preload.so", dir.str(), 2);
  const MonoTime now = Runtime::Real().Now();
  ASSERT_TRUE(clocks.ProcessStarting(0, now).ok());
  ASSERT_TRUE(clocks.ProcessStarting(1, now).ok());
  ASSERT_TRUE(clocks.Jump(1, now, 5s).ok());
  EXPECT_THAT(ReadFile(clocks.ControlPath(0)), HasSubstr("\nref_ns=0 gain_ns=0 drift_ppb=0 wall_step_ns=0\n"));
  EXPECT_THAT(ReadFile(clocks.ControlPath(1)), HasSubstr(" wall_step_ns=5000000000\n")) << "node 1 jumped, node 0 did not";
  ASSERT_TRUE(clocks.SetDriftPpm(0, now, -2000).ok());
  EXPECT_THAT(ReadFile(clocks.ControlPath(0)), HasSubstr(" drift_ppb=-2000000 "));
  EXPECT_FALSE(std::filesystem::exists(clocks.ControlPath(0) + ".tmp")) << "the temporary file is renamed over the file";
  const Status out_of_range = clocks.SetDriftPpm(0, now, -600000);
  EXPECT_FALSE(out_of_range.ok()) << "a clock running backwards or stopped cannot be modelled";
  EXPECT_THAT(out_of_range.message(), HasSubstr("-600000"));
  const std::vector<std::string> env = clocks.Env(1);
  EXPECT_THAT(env, ::testing::Contains(::testing::StartsWith("LD_PRELOAD=/lib/libkvchaos_clock_preload.so")));
  EXPECT_THAT(env, ::testing::Contains("KVCHAOS_CLOCK_FILE=" + clocks.ControlPath(1)));
}

TEST(FindClockPreloadTest, AMissingOverrideNamesTheVariableAndTheBuildHasOne) {
  ::setenv("KVCHAOS_CLOCK_PRELOAD", "/nonexistent/libkvchaos_clock_preload.so", 1);
  Result<std::string> missing = FindClockPreload();
  ::unsetenv("KVCHAOS_CLOCK_PRELOAD");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("KVCHAOS_CLOCK_PRELOAD=/nonexistent/libkvchaos_clock_preload.so"));
  Result<std::string> found = FindClockPreload();
  ASSERT_TRUE(found.ok()) << "this build's library should be found: " << found.status().message();
  EXPECT_THAT(*found, HasSubstr("libkvchaos_clock_preload.so"));
}

// One line of clock_probe: the child's two clocks and the machine's monotonic clock, in ns.
struct Sample {
  long long steady_ns = 0;
  long long wall_ns = 0;
  long long true_ns = 0;
};

std::vector<Sample> Samples(const std::string& log) {
  std::vector<Sample> out;
  std::ifstream f(log);
  for (std::string line; std::getline(f, line);) {
    Sample s;
    if (std::sscanf(line.c_str(), "%lld %lld %lld", &s.steady_ns, &s.wall_ns, &s.true_ns) == 3) out.push_back(s);
  }
  return out;
}

// The probe's newest line, some lines after the moment of the call (waits up to 2 s for one).
std::optional<Sample> SampleAfter(const std::string& log) {
  const auto asked = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(60ms);  // several lines after the moment asked (and the 2 ms reread)
  while (std::chrono::steady_clock::now() - asked < 2s) {
    const std::vector<Sample> all = Samples(log);
    if (!all.empty()) return all.back();
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

double Seconds(long long ns) { return static_cast<double>(ns) / 1e9; }

long long TrueWallNs() {
  return std::chrono::nanoseconds(std::chrono::system_clock::now().time_since_epoch()).count();
}

class ClockPreloadProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> lib = FindClockPreload();
    ASSERT_TRUE(lib.ok()) << lib.status().message();
    clocks_ = std::make_unique<NodeClocks>(*lib, dir_.str(), 1);
    ASSERT_TRUE(clocks_->ProcessStarting(0, Runtime::Real().Now()).ok());
  }
  void StartProbe(std::vector<std::string> args) {
    args.insert(args.begin(), KVCHAOS_CLOCK_PROBE);
    probe_ = std::make_unique<ChildProcess>(ChildSpec{"clock-probe", args, log(), SIGKILL, clocks_->Env(0)});
    ASSERT_TRUE(probe_->Start().ok());
  }
  void TearDown() override {
    if (probe_) probe_->Kill();
  }
  std::string log() const { return dir_.str() + "/probe.log"; }

  kvchaos::testing::TempDir dir_;
  std::unique_ptr<NodeClocks> clocks_;
  std::unique_ptr<ChildProcess> probe_;
};

TEST_F(ClockPreloadProcessTest, AJumpStepsTheWallClockOnlyAndADriftScalesBothAsTheSimulatorDoes) {
  StartProbe({});
  const std::optional<Sample> a = SampleAfter(log());
  ASSERT_TRUE(a) << "clock_probe printed nothing (log: " << ReadFile(log()) << ")";
  EXPECT_LT(std::abs(Seconds(a->wall_ns - TrueWallNs())), 1.0) << "before any fault the child's wall clock is true";
  EXPECT_LT(std::abs(Seconds(a->steady_ns - a->true_ns)), 0.01) << "before any fault its monotonic clock is true";

  // A jump forward: +1 h on the wall clock at once; the monotonic clock keeps true time.
  ASSERT_TRUE(clocks_->Jump(0, Runtime::Real().Now(), 3600s).ok());
  const std::optional<Sample> b = SampleAfter(log());
  ASSERT_TRUE(b);
  EXPECT_NEAR(Seconds((b->wall_ns - a->wall_ns) - (b->true_ns - a->true_ns)), 3600.0, 0.05)
      << "the child's wall clock did not jump by the 3600 s written to its file";
  EXPECT_NEAR(Seconds((b->steady_ns - a->steady_ns) - (b->true_ns - a->true_ns)), 0.0, 0.01)
      << "a jump must not move the monotonic clock";
  EXPECT_LT(std::abs(Seconds(TrueWallNs() - a->wall_ns) - Seconds(b->true_ns - a->true_ns)), 1.0)
      << "the machine's clock must not move";

  // A jump backward past where it started: the wall clock goes back, the monotonic one does not.
  ASSERT_TRUE(clocks_->Jump(0, Runtime::Real().Now(), -7200s).ok());
  const std::optional<Sample> c = SampleAfter(log());
  ASSERT_TRUE(c);
  EXPECT_NEAR(Seconds((c->wall_ns - b->wall_ns) - (c->true_ns - b->true_ns)), -7200.0, 0.05);
  EXPECT_NEAR(Seconds((c->steady_ns - b->steady_ns) - (c->true_ns - b->true_ns)), 0.0, 0.01);

  // A drift: both clocks run at 1.5x from here on, continuous where the rate changed.
  ASSERT_TRUE(clocks_->SetDriftPpm(0, Runtime::Real().Now(), 500000).ok());
  const std::optional<Sample> d = SampleAfter(log());
  ASSERT_TRUE(d);
  std::this_thread::sleep_for(1s);
  const std::optional<Sample> e = SampleAfter(log());
  ASSERT_TRUE(e);
  const double true_span = static_cast<double>(e->true_ns - d->true_ns);
  EXPECT_NEAR(static_cast<double>(e->steady_ns - d->steady_ns) / true_span, 1.5, 0.02)
      << "the child's monotonic clock should run at 1.5x (the simulator drifts it too)";
  EXPECT_NEAR(static_cast<double>(e->wall_ns - d->wall_ns) / true_span, 1.5, 0.02)
      << "the child's wall clock should run at 1.5x";

  // Slow again (0.6x): a rate change read a little late must not move the monotonic clock back.
  ASSERT_TRUE(clocks_->SetDriftPpm(0, Runtime::Real().Now(), -400000).ok());
  std::this_thread::sleep_for(500ms);
  const std::optional<Sample> f = SampleAfter(log());
  ASSERT_TRUE(f);
  const std::vector<Sample> all = Samples(log());
  ASSERT_GT(all.size(), 100u);
  for (size_t i = 1; i < all.size(); ++i) {
    const long long fake_step = all[i].steady_ns - all[i - 1].steady_ns;
    const long long true_step = all[i].true_ns - all[i - 1].true_ns;
    ASSERT_GE(fake_step, 0) << "the child's monotonic clock went back at line " << i + 1;
    // Never faster than the fastest rate set (1.5x): a rate change must not step the clock.
    ASSERT_LE(Seconds(fake_step), 1.5 * Seconds(true_step) + 0.02) << "the child's monotonic clock stepped at line " << i + 1;
  }
  const Sample& last = all.back();
  const Sample& before = all[all.size() - 20];
  EXPECT_NEAR(static_cast<double>(last.steady_ns - before.steady_ns) / static_cast<double>(last.true_ns - before.true_ns),
              0.6, 0.05)
      << "the child's monotonic clock should now run at 0.6x";
}

TEST_F(ClockPreloadProcessTest, AMalformedClockFileIsReportedOnceAndTheClocksReadBeforeStay) {
  ASSERT_TRUE(clocks_->Jump(0, Runtime::Real().Now(), 3600s).ok());
  StartProbe({});
  const std::optional<Sample> a = SampleAfter(log());
  ASSERT_TRUE(a) << "clock_probe printed nothing (log: " << ReadFile(log()) << ")";
  ASSERT_TRUE(WriteFileAtomically(clocks_->ControlPath(0), "+5.000000000 x1.000000000\n").ok());  // libfaketime's format
  std::this_thread::sleep_for(100ms);
  const std::optional<Sample> b = SampleAfter(log());
  ASSERT_TRUE(b);
  EXPECT_NEAR(Seconds(b->wall_ns - TrueWallNs()), 3600.0, 1.0) << "a file it cannot read must not reset the clock";
  const std::string text = ReadFile(log());
  EXPECT_THAT(text, HasSubstr("kvchaos clock preload: " + clocks_->ControlPath(0) + ": not a clock file"));
  EXPECT_EQ(text.find("not a clock file"), text.rfind("not a clock file")) << "said once, not on every reread";
}

// One line of `clock_probe waits MS`: a kind of wait and how long it took on each clock.
struct Waited {
  std::string kind;
  double fake_s = 0;
  double true_s = 0;
};

// The first `n` wait lines after `skip` lines, waiting at most `limit` (true time) for them.
std::vector<Waited> WaitLines(const std::string& log, size_t skip, size_t n, std::chrono::seconds limit) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<Waited> out;
    std::ifstream f(log);
    size_t seen = 0;
    for (std::string line; std::getline(f, line);) {
      char kind[32];
      long long fake_ns = 0, true_ns = 0;
      if (std::sscanf(line.c_str(), "%31s %lld %lld", kind, &fake_ns, &true_ns) != 3) continue;
      if (seen++ < skip) continue;
      out.push_back({kind, Seconds(fake_ns), Seconds(true_ns)});
      if (out.size() == n) return out;
    }
    if (std::chrono::steady_clock::now() - start > limit) return out;
    std::this_thread::sleep_for(20ms);
  }
}

TEST_F(ClockPreloadProcessTest, WaitsOnEitherClockEndAtTheFakeDeadlineWithoutHanging) {
  // 1.5x from the start: every wait of 600 ms of the child's clocks takes 400 ms of true time.
  ASSERT_TRUE(clocks_->SetDriftPpm(0, Runtime::Real().Now(), 500000).ok());
  ASSERT_TRUE(clocks_->Jump(0, Runtime::Real().Now(), -30s).ok());  // a wall clock set back: waits on it still end
  StartProbe({"waits", "600"});
  const std::vector<Waited> waits = WaitLines(log(), 0, 6, 20s);
  ASSERT_EQ(waits.size(), 6u) << "a wait hung or the probe failed (log: " << ReadFile(log()) << ")";
  for (const Waited& w : waits) {
    EXPECT_GE(w.fake_s, 0.6) << w.kind << " returned before its deadline on the child's clock";
    EXPECT_LT(w.fake_s, 0.85) << w.kind << " overslept on the child's clock";
    // 400 ms; 600 ms would be a deadline left on the true clock. Room above for a loaded machine.
    EXPECT_GE(w.true_s, 0.39) << w.kind << " should take 600 ms / 1.5 of true time";
    EXPECT_LT(w.true_s, 0.55) << w.kind << " should take 600 ms / 1.5 of true time";
  }
}

TEST_F(ClockPreloadProcessTest, AClockFileRewrittenMidWaitIsHonoured) {
  StartProbe({"waits", "3000"});
  // The first wait (a condition variable on steady_clock) starts at true rate; 500 ms into it the
  // clock goes 1.9x, so the 2.5 s of its clock still to wait take 1.3 s: 1.8 s in all, not 3 s.
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(clocks_->SetDriftPpm(0, Runtime::Real().Now(), 900000).ok());
  const std::vector<Waited> first = WaitLines(log(), 0, 1, 10s);
  ASSERT_EQ(first.size(), 1u) << "the wait did not end (log: " << ReadFile(log()) << ")";
  EXPECT_EQ(first[0].kind, "cv_steady");
  EXPECT_GE(first[0].fake_s, 3.0) << "the wait returned before its deadline on the child's clock";
  EXPECT_LT(first[0].fake_s, 3.4);
  // 3 s if the new rate were ignored; more than 1.8 s when the rewrite comes late on a busy machine.
  EXPECT_GT(first[0].true_s, 1.6) << "the wait ended too early";
  EXPECT_LT(first[0].true_s, 2.4) << "the rate written mid-wait was not honoured";
}

// TSan's runtime (and any interposer loaded after the preload) must see the calls the preload
// hands on: a condition wait that skipped TSan's interceptor released the mutex behind its back and
// TSan reported a double lock at the node's start (LeaderElector::LockLoop under the tsan preset).
TEST_F(ClockPreloadProcessTest, EveryReplacedFunctionHandsOnToTheNextDefinitionNotStraightToGlibc) {
  StartProbe({"chain"});
  std::map<std::string, long> calls;
  const auto start = std::chrono::steady_clock::now();
  while (calls.size() < 6 && std::chrono::steady_clock::now() - start < 10s) {
    std::this_thread::sleep_for(20ms);
    calls.clear();
    std::ifstream f(log());
    for (std::string line; std::getline(f, line);) {
      char name[64];
      long n = 0;
      if (std::sscanf(line.c_str(), "chain %63s %ld", name, &n) == 2) calls[name] = n;
    }
  }
  ASSERT_EQ(calls.size(), 6u) << "clock_probe chain did not report (log: " << ReadFile(log()) << ")";
  for (const auto& [name, n] : calls) {
    EXPECT_GT(n, 0) << "the preload's " << name
                    << " went past the interposer after it (as past TSan's interceptor) to glibc's own";
  }
}

}  // namespace
}  // namespace kvchaos::harness::real
