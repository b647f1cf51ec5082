// SimClock: drift scales readings exactly, the inverse finds the earliest true time a deadline
// is reached, and steps move readings as documented (monotonic forward only, wall either way).
#include "sim/sim_clock.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kvchaos::sim {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

int64_t Mono(const SimClock& c, TrueNs t) { return c.MonoAt(t).time_since_epoch().count(); }

TEST(SimClockTest, OffsetAndDriftScaleReadings) {
  SimClock clock(std::chrono::seconds(5), 100);  // booted 5 s before the run, 100 ppm fast
  EXPECT_EQ(Mono(clock, 0), 5 * kSecond);
  EXPECT_EQ(Mono(clock, 10 * kSecond), 15 * kSecond + 1'000'000) << "100 ppm over 10 s is 1 ms fast";
  SimClock slow(Duration::zero(), -100);
  EXPECT_EQ(Mono(slow, 10 * kSecond), 10 * kSecond - 1'000'000);
}

TEST(SimClockTest, InverseGivesEarliestTrueTimeReachingDeadline) {
  for (int64_t ppm : {-300, -1, 0, 7, 100, 250'000}) {
    SimClock clock(std::chrono::milliseconds(3), ppm);
    for (int64_t local : {int64_t{3'000'000}, int64_t{3'000'001}, int64_t{1'234'567'891}, 10 * kSecond + 17}) {
      const TrueNs t = clock.TrueWhenMonoReaches(MonoTime(Duration(local)), 0);
      EXPECT_GE(Mono(clock, t), local) << "ppm=" << ppm << " local=" << local;
      if (t > 0) {
        EXPECT_LT(Mono(clock, t - 1), local) << "not the earliest: ppm=" << ppm << " local=" << local;
      }
    }
  }
}

TEST(SimClockTest, PastDeadlineMapsToNotBefore) {
  SimClock clock;
  EXPECT_EQ(clock.TrueWhenMonoReaches(MonoTime(Duration(5)), 1000), 1000);
}

TEST(SimClockTest, DriftChangeKeepsReadingContinuous) {
  SimClock clock;
  const int64_t before = Mono(clock, kSecond);
  clock.SetDriftPpm(500, kSecond);
  EXPECT_EQ(Mono(clock, kSecond), before);
  EXPECT_EQ(Mono(clock, 2 * kSecond), 2 * kSecond + 500'000);
}

TEST(SimClockTest, MonotonicStepsOnlyForwardWallStepsBothWays) {
  SimClock clock;
  clock.StepMonoForward(std::chrono::seconds(2), kSecond);
  EXPECT_EQ(Mono(clock, kSecond), 3 * kSecond);
  clock.StepMonoForward(std::chrono::seconds(-5), kSecond);
  EXPECT_EQ(Mono(clock, kSecond), 3 * kSecond) << "a monotonic clock must never go back";
  clock.StepWall(std::chrono::seconds(-10));
  EXPECT_EQ(clock.WallAt(kSecond).time_since_epoch().count(), -7 * kSecond);
}

TEST(SimClockTest, AbsurdDriftIsRejected) {
  EXPECT_THROW(SimClock(Duration::zero(), -600'000), std::invalid_argument);
  SimClock clock;
  EXPECT_THROW(clock.SetDriftPpm(2'000'000, 0), std::invalid_argument);
}

}  // namespace
}  // namespace kvchaos::sim
