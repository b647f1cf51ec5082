// Soak (LABELS soak, not in default CI): with fencing on, stale writes accepted stay at 0 over at
// least 10^6 simulated failovers (KVCHAOS_SIM_SOAK_FAILOVERS overrides the count), and no seed
// breaks any other invariant; and 10^5 seeds of the whole product (KVCHAOS_SIM_SOAK_SEEDS
// overrides) with store and election faults mixed return no corrupt block as good, accept no stale
// write and never have two nodes acting. KVCHAOS_SIM_SOAK_FIRST_SEED starts the whole-product soak
// at another seed, so shards of the 10^5 seeds run in parallel processes; it prints the figures so
// far every 5,000 seeds, so a soak cut short still tells how far it got.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/sim_driver.h"
#include "sim/world.h"

namespace kvchaos::sim {
namespace {

TEST(SimSoakTest, NoStaleWriteAcceptedOverAMillionFailovers) {
  spdlog::set_level(spdlog::level::off);
  uint64_t target = 1'000'000;
  if (const char* env = std::getenv("KVCHAOS_SIM_SOAK_FAILOVERS")) target = std::stoull(env);
  uint64_t failovers = 0, stale_rejected = 0, seed = 1;
  for (; failovers < target; ++seed) {
    SimConfig c;
    c.seed = seed;
    c.lease_ms = 2000;
    c.duration_ms = 60'000;
    const SimResult r = RunSimulation(c);
    ASSERT_TRUE(r.ok()) << SummaryLine(r) << "\n  reproduce: " << ReproCommand(c);
    ASSERT_EQ(r.index.stale_accepted, 0u);
    failovers += r.failovers.size();
    stale_rejected += r.index.stale_rejected;
  }
  spdlog::set_level(spdlog::level::info);
  std::printf("%llu failovers over %llu seeds, %llu stale writes rejected by the fence, 0 accepted\n",
              static_cast<unsigned long long>(failovers), static_cast<unsigned long long>(seed - 1),
              static_cast<unsigned long long>(stale_rejected));
}

TEST(SimSoakTest, TheWholeProductUnderStoreAndElectionFaultsOverAHundredThousandSeeds) {
  spdlog::set_level(spdlog::level::off);
  uint64_t seeds = 100'000, first = 1;
  if (const char* env = std::getenv("KVCHAOS_SIM_SOAK_SEEDS")) seeds = std::stoull(env);
  if (const char* env = std::getenv("KVCHAOS_SIM_SOAK_FIRST_SEED")) first = std::stoull(env);
  uint64_t failovers = 0, saves = 0, corrupt_detected = 0, power_losses_cut = 0;
  const auto report = [&](uint64_t done) {
    std::printf("seeds %llu..%llu: %llu failovers, %llu acknowledged saves, %llu corrupt reads detected, 0 returned "
                "as good, %llu saves cut by power losses, 0 stale writes accepted, 0 dual acting\n",
                static_cast<unsigned long long>(first), static_cast<unsigned long long>(first + done - 1),
                static_cast<unsigned long long>(failovers), static_cast<unsigned long long>(saves),
                static_cast<unsigned long long>(corrupt_detected), static_cast<unsigned long long>(power_losses_cut));
    std::fflush(stdout);
  };
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    SimConfig c;
    c.seed = seed;
    c.lease_ms = 2000;
    c.duration_ms = 60'000;
    AddDataPlane(c);  // 3 paths to one storage, durable commits; store faults and power losses
    const SimResult r = RunSimulation(c);
    ASSERT_TRUE(r.ok()) << SummaryLine(r) << "\n  reproduce: " << ReproCommand(c);
    ASSERT_EQ(r.data.corrupt_returned, 0);
    ASSERT_EQ(r.index.stale_accepted, 0u);
    ASSERT_EQ(r.dual_acting_windows, 0u);
    failovers += r.failovers.size();
    saves += static_cast<uint64_t>(r.data.saves);
    corrupt_detected += static_cast<uint64_t>(r.data.corrupt_detected);
    power_losses_cut += static_cast<uint64_t>(r.data.saves_cut_by_power_loss);
    if (const uint64_t done = seed - first + 1; done % 5000 == 0 && done < seeds) report(done);
  }
  spdlog::set_level(spdlog::level::info);
  report(seeds);
}

}  // namespace
}  // namespace kvchaos::sim
