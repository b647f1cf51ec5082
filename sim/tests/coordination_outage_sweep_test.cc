// A coordination outage shorter than the lease moves no leadership (issue 14): swept from lease/4
// to the longest outage a leader can ride out (outage_sweep.h), 200 seeds of five outages each,
// with the production client's URI defaults (timeout 1000 ms, retry 2) and the seed design's
// example URI (timeout_ms=5000&retry_count=3). Before renewals were bounded by the local lease, a
// renewal sent into the outage blocked the lock thread for timeout x attempts and the leader
// demoted itself on most of these outages. Longer leases and refused connections: the soak test.
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

void ExpectNoFailover(const OutageSweep& sweep) {
  spdlog::set_level(spdlog::level::off);
  const std::vector<SweepRow> rows = RunOutageSweep(sweep);
  spdlog::set_level(spdlog::level::info);
  std::printf("%s\n", SweepTable(sweep, rows).c_str());
  for (const SweepRow& row : rows) {
    EXPECT_EQ(row.failovers, 0u) << row.outage_ms << " ms outages (lease " << sweep.lease_ms << " ms) caused "
                                 << row.failovers << " failover(s) in " << row.outages
                                 << " outages; first: " << row.first_failure;
    EXPECT_EQ(row.runs_with_violations, 0u) << row.outage_ms << " ms outages: " << row.first_failure;
  }
}

TEST(CoordinationOutageSweepTest, ProductionClientDefaultsRideOutOutagesShorterThanTheLease) {
  OutageSweep sweep;
  sweep.backend_timeout_ms = 1000;
  sweep.backend_retries = 2;
  sweep.outage_ms = SweepLengths(sweep.lease_ms, sweep.loop_ms);
  ExpectNoFailover(sweep);
}

TEST(CoordinationOutageSweepTest, SeedDesignExampleClientRidesOutOutagesShorterThanTheLease) {
  OutageSweep sweep;
  sweep.backend_timeout_ms = 5000;
  sweep.backend_retries = 3;
  sweep.outage_ms = SweepLengths(sweep.lease_ms, sweep.loop_ms);
  ExpectNoFailover(sweep);
}

}  // namespace
}  // namespace kvchaos::sim
