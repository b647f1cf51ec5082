// The world on coordination etcd (sim/sim_etcd.h): the production CoordinationEtcdBackend of every
// node over a 3-member cluster, with the timeline of scenarios/ci/real-etcd-failover.yaml sampled
// over many seeds — the leading node crashes, one member crashes, the leader is cut from one member,
// another member pauses (sometimes etcd's raft leader: an election), the leader is cut from every
// member. Only the node faults may move leadership; nothing may let a stale write in.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <string>

#include "sim/world.h"

namespace kvchaos::sim {
namespace {

constexpr int64_t kS = 1'000'000'000;

FaultAction At(int64_t t_s, FaultKind kind, int64_t for_ms, int member, int variant = 0) {
  FaultAction f;
  f.t = t_s * kS;
  f.kind = kind;
  f.duration_ns = for_ms * 1'000'000;
  f.member = member;
  f.variant = variant;
  f.target_leader = kind == FaultKind::kCrash || kind == FaultKind::kPartition;
  return f;
}

SimConfig EtcdFailoverWorld(uint64_t seed) {
  SimConfig c;
  c.seed = seed;
  c.nodes = 3;
  c.coordination = SimCoordination::kEtcd;
  c.etcd.election_timeout_min_ns = kS / 2;  // real mode's members (harness/real/etcd_controller.cc)
  c.etcd.election_timeout_max_ns = kS;
  c.etcd.min_ttl_s = 1;
  c.lease_ms = 3000;
  c.loop_ms = 200;
  c.backend_timeout_ms = 1000;  // the etcd:// URI's defaults
  c.backend_retries = 2;
  c.duration_ms = 45'000;
  c.quiet_start_ms = 32'000;
  c.faults = 0;
  const int m = static_cast<int>(seed % 3);  // which member each fault hits varies with the seed
  c.explicit_faults = {
      At(5, FaultKind::kCrash, 4000, -1),                                   // node fault
      At(12, FaultKind::kBackendOutage, 4000, m, /*crash*/ 0),              // member faults ...
      At(18, FaultKind::kPartition, 2500, (m + 1) % 3),
      At(21, FaultKind::kBackendOutage, 1500, (m + 2) % 3, /*pause*/ 1),
      At(26, FaultKind::kPartition, 4000, -1),                              // node cut from every member
  };
  return c;
}

class EtcdWorldTest : public ::testing::Test {
 protected:
  void SetUp() override { spdlog::set_level(spdlog::level::off); }
  void TearDown() override { spdlog::set_level(spdlog::level::info); }
};

TEST_F(EtcdWorldTest, MemberFaultsNeverMoveLeadershipAndNoStaleWriteGetsIn) {
  constexpr uint64_t kSeeds = 200;
  uint64_t failovers = 0, elections = 0, expired = 0, unanswered = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const SimResult r = RunSimulation(EtcdFailoverWorld(seed));
    const std::string where = SummaryLine(r) + "\n  (etcd: leader crash 5 s, member crash 12 s, leader cut from a "
                                               "member 18 s, member pause 21 s, leader cut from all 26 s)";
    ASSERT_TRUE(r.ok()) << where;
    EXPECT_EQ(r.index.stale_accepted, 0u) << where;
    EXPECT_EQ(r.dual_acting_windows, 0u) << where;
    EXPECT_EQ(r.token_regressions, 0u) << where;
    EXPECT_EQ(r.duplicate_lock_holders, 0u) << "etcd is linearizable: a lock is never held twice: " << where;
    EXPECT_EQ(r.unnecessary_failovers, 0u) << where;
    for (const FailoverEvent& f : r.failovers) {
      EXPECT_TRUE(f.fault_ns == 5 * kS || f.fault_ns == 26 * kS)
          << "a failover caused by the fault at " << f.fault_ns / 1'000'000 << " ms (" << f.cause
          << "): only the node faults (5 s, 26 s) may move leadership: " << where;
    }
    EXPECT_GE(r.failovers.size(), 2u) << "the leader's crash and its cut from every member each need a failover: "
                                      << where;
    failovers += r.failovers.size();
    elections += r.coordination_elections;
    expired += r.coordination_leases_expired;
    unanswered += r.coordination_unanswered;
  }
  // The member faults did hit: some paused or crashed etcd's raft leader (an election), and the
  // crashed node's lease expired on etcd's leader.
  EXPECT_GT(elections, kSeeds) << "no member fault ever hit etcd's raft leader over " << kSeeds << " seeds";
  EXPECT_GE(expired, kSeeds) << "the crashed leader's lease must expire in etcd";
  EXPECT_GT(unanswered, 0u) << "no request ever hung at a paused member or one waiting for a leader";
  std::printf("etcd world: %llu seeds, %llu failovers, %llu raft elections, %llu leases expired, %llu requests "
              "unanswered\n",
              static_cast<unsigned long long>(kSeeds), static_cast<unsigned long long>(failovers),
              static_cast<unsigned long long>(elections), static_cast<unsigned long long>(expired),
              static_cast<unsigned long long>(unanswered));
}

// etcd's raft leader cut from both peers loses its quorum: the other two elect a new leader, the
// cut member stops answering, and the nodes' clients move on to the others. The kvchaos leader
// keeps renewing through it: its leadership never moves and nothing stale gets in.
SimConfig RaftLeaderCutFromPeers(uint64_t seed) {
  SimConfig c = EtcdFailoverWorld(seed);
  c.duration_ms = 30'000;
  c.quiet_start_ms = 22'000;
  FaultAction cut;
  cut.kind = FaultKind::kPartition;
  cut.peers = PartitionPeers::kEtcdPeers;
  cut.member = -1;  // the member leading raft when it fires
  c.explicit_faults.clear();
  for (const auto& [t_s, for_ms] : {std::pair{5, 4000}, std::pair{12, 2500}, std::pair{17, 3500}}) {
    cut.t = t_s * kS;
    cut.duration_ns = for_ms * 1'000'000;
    c.explicit_faults.push_back(cut);
  }
  return c;
}

TEST_F(EtcdWorldTest, RaftLeaderCutFromItsPeersNeverMovesLeadershipAndNoStaleWriteGetsIn) {
  constexpr uint64_t kSeeds = 200;
  uint64_t elections = 0, stuck = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const SimResult r = RunSimulation(RaftLeaderCutFromPeers(seed));
    const std::string where = SummaryLine(r) + "\n  (etcd: the raft leader cut from both peers at 5 s, 12 s, 17 s)";
    ASSERT_TRUE(r.ok()) << where;
    EXPECT_EQ(r.index.stale_accepted, 0u) << where;
    EXPECT_EQ(r.dual_acting_windows, 0u) << where;
    EXPECT_EQ(r.duplicate_lock_holders, 0u) << where;
    EXPECT_EQ(r.failovers.size(), 0u) << "a member cut from its peers leaves a quorum of two: the kvchaos leader "
                                         "must keep leading: " << where;
    EXPECT_EQ(r.unnecessary_failovers, 0u) << where;
    elections += r.coordination_elections;
    stuck += r.coordination_unanswered + r.coordination_no_leader;
  }
  // Each cut hit a raft leader and the two others elected a new one: 1 + 3 elections a seed.
  EXPECT_GT(stuck, 0u) << "no request ever reached a cut member: the nodes' clients never had to move on";
  EXPECT_GE(elections, 4 * kSeeds) << "cutting the raft leader from its peers must make the others elect a new one";
  std::printf("etcd raft leader cut from peers: %llu seeds, %llu raft elections, 0 failovers\n",
              static_cast<unsigned long long>(kSeeds), static_cast<unsigned long long>(elections));
}

TEST_F(EtcdWorldTest, OneSeedReplaysTheSameTrace) {
  const SimResult a = RunSimulation(EtcdFailoverWorld(17));
  const SimResult b = RunSimulation(EtcdFailoverWorld(17));
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.checkpoints, b.checkpoints);
  EXPECT_NE(a.trace_hash, RunSimulation(EtcdFailoverWorld(18)).trace_hash);
}

// The generated chaos (every default fault kind: crashes, pauses, partitions, coordination
// outages — cut off, or every member down —, clocks, lossy links, slow CPUs) over etcd: correct
// code passes, and the checkers still see what planted bugs do with the etcd ground truth (a
// leader serving while it demotes acts beside the next one; without the fence a deposed leader's
// write gets in). Margin bugs stay hidden: etcd holds a lock for whole seconds and revokes late.
SimConfig EtcdChaos(uint64_t seed, PlantedBug bug) {
  SimConfig c;
  c.seed = seed;
  c.nodes = 3;
  c.lease_ms = 2000;
  c.loop_ms = 100;
  c.duration_ms = 60'000;
  c.coordination = SimCoordination::kEtcd;
  c.bug = bug;
  return c;
}

TEST_F(EtcdWorldTest, GeneratedChaosPassesAndPlantedBugsAreCaught) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const SimResult r = RunSimulation(EtcdChaos(seed, PlantedBug::kNone));
    EXPECT_TRUE(r.ok()) << SummaryLine(r) << "\n  (etcd, generated faults)";
  }
  for (PlantedBug bug : {PlantedBug::kServeWhileDemoting, PlantedBug::kFenceOff}) {
    uint64_t caught_at = 0;
    for (uint64_t seed = 1; seed <= 100 && caught_at == 0; ++seed) {
      if (!RunSimulation(EtcdChaos(seed, bug)).ok()) caught_at = seed;
    }
    EXPECT_GT(caught_at, 0u) << "planted bug " << PlantedBugName(bug) << " not caught over etcd in 100 seeds";
    std::printf("etcd chaos: %s caught at seed %llu\n", PlantedBugName(bug), static_cast<unsigned long long>(caught_at));
  }
}

}  // namespace
}  // namespace kvchaos::sim
