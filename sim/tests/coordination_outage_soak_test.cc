// Soak (LABELS soak) of the coordination-outage sweep (coordination_outage_sweep_test.cc): the
// seed design's 10 s lease, a 3 s lease with a 200 ms loop, a backend that refuses connections at
// once instead of losing them, and 1000 seeds of the 2 s lease; each for the production client's
// URI defaults and the seed design's example URI. No outage shorter than the lease may fail over.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "sim/tests/outage_sweep.h"

namespace kvchaos::sim {
namespace {

using testing::OutageSweep;
using testing::RunOutageSweep;
using testing::SweepLengths;
using testing::SweepRow;
using testing::SweepTable;

struct ClientSettings {
  int64_t timeout_ms;
  int retries;
};
constexpr ClientSettings kProductionDefaults{1000, 2};
constexpr ClientSettings kSeedExample{5000, 3};

void ExpectNoFailover(OutageSweep sweep) {
  sweep.outage_ms = SweepLengths(sweep.lease_ms, sweep.loop_ms);
  for (const ClientSettings& client : {kProductionDefaults, kSeedExample}) {
    sweep.backend_timeout_ms = client.timeout_ms;
    sweep.backend_retries = client.retries;
    spdlog::set_level(spdlog::level::off);
    const std::vector<SweepRow> rows = RunOutageSweep(sweep);
    spdlog::set_level(spdlog::level::info);
    std::printf("%s\n", SweepTable(sweep, rows).c_str());
    for (const SweepRow& row : rows) {
      EXPECT_EQ(row.failovers, 0u) << SweepTable(sweep, rows) << "\n  first: " << row.first_failure;
      EXPECT_EQ(row.runs_with_violations, 0u) << row.first_failure;
    }
  }
}

TEST(CoordinationOutageSoakTest, SeedDesignLeaseOfTenSeconds) {
  OutageSweep sweep;
  sweep.lease_ms = 10000;
  sweep.loop_ms = 100;
  ExpectNoFailover(sweep);
}

TEST(CoordinationOutageSoakTest, ThreeSecondLeaseWithA200MsLoop) {
  OutageSweep sweep;
  sweep.lease_ms = 3000;
  sweep.loop_ms = 200;
  ExpectNoFailover(sweep);
}

TEST(CoordinationOutageSoakTest, ABackendThatRefusesConnections) {
  OutageSweep sweep;
  sweep.outage_variant = 1;  // down: every attempt fails at once, the renewals retry sooner
  ExpectNoFailover(sweep);
}

TEST(CoordinationOutageSoakTest, AThousandSeedsOfTheTwoSecondLease) {
  OutageSweep sweep;
  sweep.seeds = 1000;
  ExpectNoFailover(sweep);
}

}  // namespace
}  // namespace kvchaos::sim
