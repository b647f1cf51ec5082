// Coordination outages shorter than the lease, swept over outage lengths and seeds (issue 14): a
// 3-node cluster, the backend unreachable (requests and replies lost) five times per run, each
// outage starting at a random moment (so at every phase of the leader's renew ticks). Counts the
// failovers each outage length caused; a leader that rides out the outage causes none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/rng.h"
#include "core/election/leader_elector.h"
#include "sim/world.h"

namespace kvchaos::sim::testing {

struct OutageSweep {
  int64_t lease_ms = 2000;
  int64_t loop_ms = 100;
  int64_t backend_timeout_ms = 1000;  // the coordination client's URI settings
  int backend_retries = 2;
  int outage_variant = 0;  // kBackendOutage: 0 = unreachable (timeouts), 1 = down (refused at once)
  std::vector<int64_t> outage_ms;
  uint64_t seeds = 200;
  int outages_per_run = 5;
};

struct SweepRow {
  int64_t outage_ms = 0;
  uint64_t outages = 0;
  uint64_t failovers = 0;
  uint64_t runs_with_violations = 0;  // any checker's (stale writes, dual acting, liveness, ...)
  std::string first_failure;          // the summary line of the first run that failed over or broke a check
};

// The longest outage a leader must ride out: one that begins just after the leader's last
// answered renewal and ends a round trip before that renewal's lease_end − margin. Renewals
// leave every loop, so the outage may begin up to a loop after it: lease − margin − loop, less
// kRoundTripAllowanceMs for the renewal that must still travel after the outage (the simulated
// link's base latency, jitter and most of its tail, both ways). At exactly lease − margin − loop
// the unluckiest phase leaves no time at all for a round trip.
inline constexpr int64_t kRoundTripAllowanceMs = 5;
inline int64_t LongestRiddenOutOutageMs(int64_t lease_ms, int64_t loop_ms) {
  return lease_ms - election::DefaultSafetyMarginMs(lease_ms, loop_ms) - loop_ms - kRoundTripAllowanceMs;
}

// lease/4, lease/2, 3·lease/4, a loop short of the longest, and the longest.
inline std::vector<int64_t> SweepLengths(int64_t lease_ms, int64_t loop_ms) {
  const int64_t longest = LongestRiddenOutOutageMs(lease_ms, loop_ms);
  return {lease_ms / 4, lease_ms / 2, 3 * lease_ms / 4, longest - loop_ms, longest};
}

inline SimConfig OutageRun(const OutageSweep& sweep, int64_t outage_ms, uint64_t seed) {
  constexpr int64_t kMsNs = 1'000'000;
  SimConfig c;
  c.seed = seed;
  c.nodes = 3;
  c.lease_ms = sweep.lease_ms;
  c.loop_ms = sweep.loop_ms;
  c.backend_timeout_ms = sweep.backend_timeout_ms;
  c.backend_retries = sweep.backend_retries;
  c.faults = 0;          // only the outages
  c.buggify = false;     // a skipped renewal (buggify) is a fault of its own; this measures outages
  c.quiet_fraction = 0;  // the minimum quiet phase after the last outage
  Rng rng = Rng(seed).Split("outage-sweep");
  int64_t t_ns = 2 * sweep.lease_ms * kMsNs;  // a leader serves by then
  for (int k = 0; k < sweep.outages_per_run; ++k) {
    t_ns += rng.UniformInt(0, sweep.loop_ms * kMsNs);  // any phase of the renew ticks
    FaultAction outage;
    outage.t = t_ns;
    outage.kind = FaultKind::kBackendOutage;
    outage.variant = sweep.outage_variant;
    outage.duration_ns = outage_ms * kMsNs;
    c.explicit_faults.push_back(outage);
    t_ns += (outage_ms + 2 * sweep.lease_ms) * kMsNs;  // the next starts well after this one healed
  }
  // The quiet phase (liveness bound 2 leases + 2 leases, no faults) starts after the last outage.
  c.duration_ms = t_ns / kMsNs + 4 * sweep.lease_ms;
  return c;
}

inline std::vector<SweepRow> RunOutageSweep(const OutageSweep& sweep) {
  std::vector<SweepRow> rows;
  for (int64_t outage_ms : sweep.outage_ms) {
    SweepRow row;
    row.outage_ms = outage_ms;
    for (uint64_t seed = 1; seed <= sweep.seeds; ++seed) {
      const SimConfig c = OutageRun(sweep, outage_ms, seed);
      const SimResult r = RunSimulation(c);
      row.outages += static_cast<uint64_t>(sweep.outages_per_run);
      if ((!r.failovers.empty() || !r.ok()) && row.first_failure.empty()) row.first_failure = SummaryLine(r);
      row.failovers += r.failovers.size();
      row.runs_with_violations += r.ok() ? 0 : 1;
    }
    rows.push_back(row);
  }
  return rows;
}

// "lease 2000 ms, loop 100 ms, client 1000 ms x 3 attempts: 500 ms 0/1000, ..." for test output.
inline std::string SweepTable(const OutageSweep& sweep, const std::vector<SweepRow>& rows) {
  std::string out = "lease " + std::to_string(sweep.lease_ms) + " ms, loop " + std::to_string(sweep.loop_ms) +
                    " ms, client timeout " + std::to_string(sweep.backend_timeout_ms) + " ms x " +
                    std::to_string(sweep.backend_retries + 1) + " attempts, outage variant " +
                    std::to_string(sweep.outage_variant) + ": failovers per outage length:";
  for (const SweepRow& row : rows) {
    out += " " + std::to_string(row.outage_ms) + " ms " + std::to_string(row.failovers) + "/" +
           std::to_string(row.outages) + ";";
  }
  return out;
}

}  // namespace kvchaos::sim::testing
