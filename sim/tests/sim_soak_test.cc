// Soak (LABELS soak, not in default CI): with fencing on, stale writes accepted stay at 0 over at
// least 10^6 simulated failovers (KVCHAOS_SIM_SOAK_FAILOVERS overrides the count), and no seed
// breaks any other invariant.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

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

}  // namespace
}  // namespace kvchaos::sim
