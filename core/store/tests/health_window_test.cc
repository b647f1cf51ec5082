// HealthWindow: upstream's trip/recover semantics and the late-result rules.
#include "core/store/health_window.h"

#include <gtest/gtest.h>

namespace kvchaos::store {
namespace {

constexpr auto kBiz = SampleSource::kBusiness;
constexpr auto kProbe = SampleSource::kProbe;

TEST(HealthWindowTest, TripsOnThresholdFailuresWithoutWaitingForAFullWindow) {
  HealthWindow w(8, 2);
  EXPECT_EQ(w.Record(false, kBiz), WindowChange::kNone);
  EXPECT_TRUE(w.healthy()) << "one failure is below the threshold of 2";
  EXPECT_EQ(w.Record(true, kBiz), WindowChange::kNone);
  EXPECT_EQ(w.Record(false, kBiz), WindowChange::kTripped) << "2 non-consecutive failures in 3 results must trip";
  EXPECT_FALSE(w.healthy());
}

TEST(HealthWindowTest, OldFailuresSlideOut) {
  HealthWindow w(4, 2);
  w.Record(false, kBiz);
  for (int i = 0; i < 4; ++i) w.Record(true, kBiz);  // the failure leaves the window
  EXPECT_EQ(w.failures(), 0);
  EXPECT_EQ(w.Record(false, kBiz), WindowChange::kNone) << "only one failure is inside the window";
  EXPECT_TRUE(w.healthy());
}

TEST(HealthWindowTest, RecoveryNeedsAFullWindowOfProbeSuccesses) {
  HealthWindow w(8, 2);
  w.Record(false, kBiz);
  w.Record(false, kBiz);
  ASSERT_FALSE(w.healthy());
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(w.Record(true, kProbe), WindowChange::kNone) << "success " << i + 1 << " of 8 must not recover yet";
  }
  EXPECT_EQ(w.Record(true, kProbe), WindowChange::kRecovered);
  EXPECT_TRUE(w.healthy());
}

TEST(HealthWindowTest, AFailedProbeRestartsTheRecoveryCount) {
  HealthWindow w(8, 2);
  w.Record(false, kBiz);
  w.Record(false, kBiz);
  for (int i = 0; i < 7; ++i) w.Record(true, kProbe);
  w.Record(false, kProbe);
  EXPECT_FALSE(w.healthy()) << "a failed probe must keep the path excluded";
  for (int i = 0; i < 7; ++i) w.Record(true, kProbe);
  EXPECT_FALSE(w.healthy()) << "the failed probe is still inside the window";
  EXPECT_EQ(w.Record(true, kProbe), WindowChange::kRecovered);
}

TEST(HealthWindowTest, LateBusinessSuccessNeverRestoresButLateFailureCounts) {
  HealthWindow w(4, 2);
  w.Record(false, kBiz);
  w.Record(false, kBiz);
  ASSERT_FALSE(w.healthy());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(w.Record(true, kBiz), WindowChange::kDropped);
  EXPECT_FALSE(w.healthy()) << "business successes on an excluded path must not readmit it";
  for (int i = 0; i < 3; ++i) w.Record(true, kProbe);
  EXPECT_EQ(w.Record(false, kBiz), WindowChange::kNone) << "a late business failure still counts";
  for (int i = 0; i < 3; ++i) w.Record(true, kProbe);
  EXPECT_FALSE(w.healthy()) << "the late failure must delay recovery";
  EXPECT_EQ(w.Record(true, kProbe), WindowChange::kRecovered);
}

TEST(HealthWindowTest, ProbeResultsForAHealthyBackendAreDropped) {
  HealthWindow w(8, 2);
  EXPECT_EQ(w.Record(false, kProbe), WindowChange::kDropped);
  EXPECT_EQ(w.Record(false, kProbe), WindowChange::kDropped);
  EXPECT_TRUE(w.healthy());
  EXPECT_EQ(w.count(), 0);
}

TEST(HealthWindowTest, AWindowStartingUnhealthyNeedsAFullWindow) {
  HealthWindow w(3, 1, /*initially_healthy=*/false);
  EXPECT_EQ(w.Record(true, kProbe), WindowChange::kNone);
  EXPECT_EQ(w.Record(true, kProbe), WindowChange::kNone);
  EXPECT_EQ(w.Record(true, kProbe), WindowChange::kRecovered);
}

}  // namespace
}  // namespace kvchaos::store
