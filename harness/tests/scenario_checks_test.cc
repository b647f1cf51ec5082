// The checks JSON Schema cannot express: each impossible combination is rejected with the line and
// key to fix and a reason in the user's units; sound timelines pass.
#include "harness/scenario_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/tests/scenario_test_util.h"

namespace kvchaos::harness {
namespace {

using ::testing::HasSubstr;
using testing::ErrorOf;
using testing::RealBase;
using testing::SimBase;

std::string SimFaults(const std::string& faults) { return SimBase() + "faults:\n" + faults; }
std::string RealFaults(const std::string& faults) { return RealBase() + "faults:\n" + faults; }

TEST(ScenarioChecks, AFaultAtOrAfterTheEndOfTheRunIsRejected) {
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 2m, action: crash, node: 0}\n")),
              HasSubstr("t.yaml:13: faults[0].at: 120s is at or after the end of the run (duration 120s)"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 110s, action: crash, node: 0, for: 20s}\n")),
              HasSubstr("t.yaml:13: faults[0].for: the fault would end at 130s, after the end of the run"));
}

TEST(ScenarioChecks, NodeIndexesMustExist) {
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, action: pause, node: 3, for: 1s}\n")),
              HasSubstr("t.yaml:13: faults[0].node: node 3 does not exist: topology.nodes is 3 (indexes 0..2)"));
  std::string single = SimBase();
  single.replace(single.find("nodes: 3"), 8, "nodes: 1");
  EXPECT_THAT(ErrorOf(single + "faults:\n  - {at: 1s, action: crash, node: follower, for: 1s}\n"),
              HasSubstr("faults[0].node: a single-node topology has no follower"));
}

TEST(ScenarioChecks, RestartNeedsANodeThatIsDownAndResumeOneThatIsPaused) {
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 10s, action: restart, node: 1}\n")),
              HasSubstr("t.yaml:13: faults[0].node: restart of node 1 at 10s, but it is up then (since the start)"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 10s, action: crash, node: 1, for: 5s}\n"
                                "  - {at: 20s, action: restart, node: 1}\n")),
              HasSubstr("t.yaml:14: faults[1].node: restart of node 1 at 20s, but it is up then (since 15s, line 13)"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 10s, action: crash, node: 1}\n"
                                "  - {at: 20s, action: resume, node: 1}\n")),
              HasSubstr("faults[1].node: resume of node 1 at 20s, but it is down then (since 10s, line 13)"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 10s, action: crash, node: 2}\n"
                                "  - {at: 20s, action: crash, node: 2}\n")),
              HasSubstr("faults[1].node: crash of node 2 at 20s, but it is down then"));
  // A restart inside a `for` window leaves the automatic restart with nothing to restart.
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 10s, action: stop, node: 0, for: 30s}\n"
                                "  - {at: 20s, action: restart, node: 0}\n")),
              HasSubstr("faults[0].node: the automatic restart (`for`) of node 0 at 40s, but it is up then"));
}

TEST(ScenarioChecks, SoundNodeTimelinesPass) {
  EXPECT_EQ(ErrorOf(SimFaults("  - {at: 10s, action: crash, node: 1}\n"
                              "  - {at: 20s, action: restart, node: 1}\n"
                              "  - {at: 30s, action: pause, node: 1}\n"
                              "  - {at: 31s, action: resume, node: 1}\n"
                              "  - {at: 40s, action: stop, node: 1, for: 10s}\n"
                              "  - {at: 50s, action: crash, node: 1, for: 10s}\n"
                              "  - {at: 60s, every: 20s, for: 5s, action: pause, node: 2}\n")),
            "")
      << "a crash at the very moment a `for` window ends is legal: ends apply first";
}

TEST(ScenarioChecks, SymbolicTargetsOfLifecycleFaultsNeedFor) {
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 10s, action: crash, node: leader}\n")),
              HasSubstr("t.yaml:13: faults[0].action: crash of 'leader' needs `for`"));
}

TEST(ScenarioChecks, RepeatsMustFitAndNotOverlap) {
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, every: 5s, for: 5s, action: pause, node: 0, until: 20s}\n")),
              HasSubstr("faults[0].every: must be longer than `for` (5s)"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, every: 5s, action: pause, node: 0}\n")),
              HasSubstr("faults[0].every: a repeated pause needs `for`"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, until: 5s, action: pause, node: 0, for: 1s}\n")),
              HasSubstr("faults[0].until: only means something with `every`"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 5s, every: 10s, for: 9s, action: pause, node: 0}\n")),
              HasSubstr("t.yaml:13: faults[0].every: the last repeat (at 115s) would end at 124s, after the run"));
}

TEST(ScenarioChecks, ATimelineThatWouldExplodeIsRejected) {
  std::string text = SimBase();
  text.replace(text.find("duration: 2m"), 12, "duration: 100h");
  EXPECT_THAT(ErrorOf(text + "faults:\n  - {at: 0, every: 1ms, action: clock-jump, node: 0, by: +1ms}\n"),
              HasSubstr("t.yaml:13: faults[0].every: repeats 360000000 times, more than the 200000 timeline steps"));
}

TEST(ScenarioChecks, TopologyValuesMustWorkTogether) {
  std::string loop = SimBase();
  loop.replace(loop.find("loop_interval_ms: 100"), 21, "loop_interval_ms: 2000");
  EXPECT_THAT(ErrorOf(loop), HasSubstr("t.yaml:8: topology.loop_interval_ms: must be shorter than lease_ms (2000)"));
  std::string redis = SimBase();
  redis.insert(redis.find("workload:"), "  coordination: redis\n");
  EXPECT_THAT(ErrorOf(redis), HasSubstr("t.yaml:9: topology.coordination: mode sim runs on the simulator's backend"));
  std::string memory = RealBase();
  memory.replace(memory.find("coordination: redis"), 19, "coordination: memory");
  EXPECT_THAT(ErrorOf(memory), HasSubstr("t.yaml:8: topology.coordination: memory coordination lives in one process"));
  std::string twice = RealBase();
  twice.replace(twice.find("name: p2"), 8, "name: p1");
  EXPECT_THAT(ErrorOf(twice), HasSubstr("t.yaml:11: topology.backends[1].name: backend name 'p1' is used twice"));
}

TEST(ScenarioChecks, ElectorAndClientSettingsMustFitTheLeaseAndTheBackend) {
  std::string margin = SimBase();
  margin.insert(margin.find("workload:"), "  safety_margin_ms: 2000\n");
  EXPECT_THAT(ErrorOf(margin), HasSubstr("t.yaml:9: topology.safety_margin_ms: must be less than lease_ms (2000)"));
  std::string file = RealBase();
  file.replace(file.find("coordination: redis"), 19, "coordination: file\n  coordination_retries: 1");
  EXPECT_THAT(ErrorOf(file), HasSubstr("t.yaml:9: topology.coordination_retries: sets the coordination client's "
                                       "timeouts, but coordination is file, which has no client"));
  std::string timeout = RealBase();
  timeout.replace(timeout.find("coordination: redis"), 19, "coordination_timeout_ms: 250");
  EXPECT_EQ(ErrorOf(timeout), "") << "real mode coordinates through Redis by default";
  std::string sim = SimBase();
  sim.insert(sim.find("workload:"), "  coordination_timeout_ms: 250\n  coordination_retries: 0\n");
  EXPECT_EQ(ErrorOf(sim), "") << "the simulator's backend has the Redis client's settings";
}

TEST(ScenarioChecks, StoreFaultsNeedAKnownFaultfsBackendAndExactlyOneEffect) {
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-fault, backend: p9, errno: EIO, for: 1s}\n")),
              HasSubstr("t.yaml:15: faults[0].backend: no backend named 'p9' in topology.backends (p1, p2)"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-fault, backend: p2, errno: EIO, for: 1s}\n")),
              HasSubstr("faults[0].backend: backend 'p2' is not on faultfs (set faultfs: true"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-fault, backend: p1, errno: EIO, hang: true}\n")),
              HasSubstr("faults[0]: a store-fault needs exactly one effect of errno, latency, bit_flips, hang or "
                        "misdirected_read (got 2)"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-fault, backend: p1}\n")), HasSubstr("(got 0)"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-fault, backend: p1, bit_flips: 1, ops: [write]}\n")),
              HasSubstr("faults[0].ops: bit_flips applies to reads only, not 'write'"));
}

TEST(ScenarioChecks, MisdirectedReadsAreReadFaultsAndMisrouteExpectationsNeedInlineHeaders) {
  EXPECT_EQ(ErrorOf(RealFaults("  - {at: 1s, action: store-fault, backend: p1, misdirected_read: true, for: 1s}\n")), "");
  EXPECT_EQ(ErrorOf(RealFaults("  - {at: 1s, action: store-fault, backend: p1, misdirected_read: true, source: \"*/*\"}\n")),
            "");
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-fault, backend: p1, misdirected_read: true, ops: [write]}\n")),
              HasSubstr("t.yaml:15: faults[0].ops: misdirected_read applies to reads only, not 'write'"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-fault, backend: p1, errno: EIO, source: \"*\"}\n")),
              HasSubstr("t.yaml:15: faults[0].source: belongs to misdirected_read"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-fault, backend: p1, misdirected_read: true, hang: true}\n")),
              HasSubstr("(got 2)"));
  EXPECT_THAT(ErrorOf(RealBase() + "expect:\n  min_misrouted_reads: 1\n"),
              HasSubstr("t.yaml:15: expect.min_misrouted_reads: can never be reached: only blocks with an inline "
                        "header can tell a misrouted read; set topology.inline_header: true"));
  std::string headed = RealBase() + "expect:\n  min_misrouted_reads: 1\n";
  headed.insert(headed.find("  backends:"), "  inline_header: true\n");
  EXPECT_EQ(ErrorOf(headed), "");
  Result<Scenario> parsed = ParseScenario(headed, "t.yaml");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->topology.inline_header);
  EXPECT_EQ(parsed->expect.min_misrouted_reads, 1);
}

TEST(ScenarioChecks, MetaSwapNeedsADataPlaneAndForInBothModes) {
  std::string sim = SimFaults("  - {at: 1s, action: meta-swap, for: 2s}\n");
  EXPECT_THAT(ErrorOf(sim), HasSubstr("t.yaml:13: faults[0].action: meta-swap exchanges the records of two cached "
                                      "keys: the run needs a data plane"));
  sim.insert(sim.find("workload:"), "  backends:\n    - {name: p1, faultfs: false}\n");
  EXPECT_EQ(ErrorOf(sim), "");
  std::string forever = SimFaults("  - {at: 1s, action: meta-swap}\n");
  forever.insert(forever.find("workload:"), "  backends:\n    - {name: p1, faultfs: false}\n");
  EXPECT_THAT(ErrorOf(forever), HasSubstr("faults[0]")) << "a swap is undone at the end of its `for`";
  EXPECT_EQ(ErrorOf(RealFaults("  - {at: 1s, action: meta-swap, for: 2s}\n")), "")
      << "real mode swaps the records in the meta index's redis-server";
}

TEST(ScenarioChecks, StoreCrashesNeedAFaultfsBackendAndDurableCommitsToKeepAckedBlocks) {
  const std::string cache_ok = "expect:\n  acked_blocks_readable: false\n";
  EXPECT_EQ(ErrorOf(RealFaults("  - {at: 1s, every: 2s, action: store-crash, backend: p1}\n") + cache_ok), "")
      << "a repeated crash is a one-off each time: no `for` needed";
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-crash, backend: p2}\n") + cache_ok),
              HasSubstr("faults[0].backend: backend 'p2' is not on faultfs (set faultfs: true"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-crash, backend: p9}\n") + cache_ok),
              HasSubstr("faults[0].backend: no backend named 'p9'"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-crash, backend: p1, for: 1s}\n") + cache_ok),
              HasSubstr("faults[0].for: unknown key")) << "a power loss has no duration";
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: store-crash, backend: p1}\n")),
              HasSubstr("expect.acked_blocks_readable: cannot hold: the store-crash of faults[0] loses every "
                        "acknowledged block not yet durable, and topology.durable_commit is off"));
  std::string durable = RealFaults("  - {at: 1s, action: store-crash, backend: p1}\n");
  durable.insert(durable.find("  backends:"), "  durable_commit: true\n");
  EXPECT_EQ(ErrorOf(durable), "") << "with durable commits every acknowledged block must survive";
  // The simulator's disk applies store crashes too, on the topology's backends.
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, action: store-crash, backend: all}\n") + cache_ok),
              HasSubstr("faults[0].backend: topology.backends is empty"));
  std::string sim = SimFaults("  - {at: 1s, action: store-crash, backend: p1}\n") + cache_ok;
  sim.insert(sim.find("workload:"), "  backends:\n    - {name: p1, faultfs: true}\n    - {name: p2, faultfs: true}\n");
  EXPECT_EQ(ErrorOf(sim), "") << "mode sim runs store crashes on its simulated disk";
}

TEST(ScenarioChecks, EachModeRejectsFaultsItCannotApply) {
  // Real mode partitions a node from the coordination Redis (a proxy per node), and from the
  // workload's client (a proxy in front of its API) when the run has one.
  EXPECT_EQ(ErrorOf(RealFaults("  - {at: 1s, action: partition, node: 0, for: 1s}\n")), "");
  EXPECT_EQ(ErrorOf(RealFaults("  - {at: 1s, action: partition, node: 0, from: nodes, for: 1s}\n")), "");
  std::string no_client = RealFaults("  - {at: 1s, action: network, node: 0, from: nodes, delay: 50ms, for: 1s}\n");
  no_client.erase(no_client.find("  backends:"), no_client.find("workload:") - no_client.find("  backends:"));
  EXPECT_THAT(ErrorOf(no_client), HasSubstr("faults[0].from: in real mode the hosts that call a node's API are the "
                                            "workload's client: needs topology.backends"));
  // Real mode moves node clocks (a clock preload per node process), not the coordination server's.
  EXPECT_EQ(ErrorOf(RealFaults("  - {at: 1s, action: clock-jump, node: 0, by: +1s}\n")), "");
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: clock-jump, node: coordination, by: +1s}\n")),
              HasSubstr("faults[0].node: clock-jump on coordination needs the simulator"));
  // The simulator's disk has the store backends of the topology, and applies faultfs rules to them.
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, action: store-fault, backend: all, errno: EIO, for: 1s}\n")),
              HasSubstr("faults[0].backend: topology.backends is empty"));
  std::string sim = SimFaults("  - {at: 1s, action: store-fault, backend: p1, errno: EIO, for: 1s}\n");
  sim.insert(sim.find("workload:"), "  backends:\n    - {name: p1, faultfs: true}\n");
  EXPECT_EQ(ErrorOf(sim), "") << "mode sim applies store faults to its simulated disk";
  std::string file = RealBase();
  file.replace(file.find("coordination: redis"), 19, "coordination: file");
  EXPECT_THAT(ErrorOf(file + "faults:\n  - {at: 1s, action: coordination-outage, for: 1s}\n"),
              HasSubstr("a coordination outage in real mode stops redis-server or etcd members: needs "
                        "coordination: redis or etcd"));
}

TEST(ScenarioChecks, ExpectationsThatCanNeverBeMetAreRejected) {
  EXPECT_THAT(ErrorOf(SimBase() + "expect:\n  min_ops: 5000\n"),
              HasSubstr("t.yaml:13: expect.min_ops: can never be reached: the workload issues at most 2400 "
                        "operations in 120s"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 10s, action: crash, node: leader, for: 5s}\n") +
                      "expect:\n  failover_p99_ms: 500\n"),
              HasSubstr("t.yaml:15: expect.failover_p99_ms: 500 ms cannot be met: after a leader crash its lease "
                        "must run out first (lease_ms - loop_interval_ms = 1900 ms)"));
  EXPECT_EQ(ErrorOf(SimFaults("  - {at: 10s, action: demote, node: leader}\n") + "expect:\n  failover_p99_ms: 500\n"),
            "")
      << "a graceful demote hands over without waiting out the lease";
}

TEST(ScenarioChecks, NetworkFaultsNeedAnEffectAndTheSimulator) {
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, action: network, node: 0, for: 5s}\n")),
              HasSubstr("t.yaml:13: faults[0]: a network fault needs loss, duplication, delay, jitter or bandwidth"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: slow, node: 0, wakeup_delay: 5ms, for: 5s}\n")),
              HasSubstr("faults[0].action: slow needs the simulator"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, action: slow, node: 0, for: 5s}\n")),
              HasSubstr("faults[0].wakeup_delay: missing (required)"));
}

// Real mode's proxies carry byte streams over connections: a bandwidth cap and a reset partition
// exist there only, and each is parsed or refused naming its field.
TEST(ScenarioChecks, BandwidthAndResetAreRealModesAndNamedWhenWrong) {
  Result<Scenario> real = ParseScenario(RealBase() +
                                            "faults:\n"
                                            "  - {at: 1s, action: network, node: 0, bandwidth: 256KiB/s, jitter: 40ms, for: 5s}\n"
                                            "  - {at: 10s, action: partition, node: leader, reset: true, for: 2s}\n",
                                        "t.yaml");
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  EXPECT_EQ(real->faults[0].net_bandwidth, 256u * 1024);
  EXPECT_EQ(real->faults[0].net_jitter, Duration(std::chrono::milliseconds(40)));
  EXPECT_TRUE(real->faults[1].partition_reset);
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: network, node: 0, bandwidth: 256KiB, for: 5s}\n")),
              HasSubstr("faults[0].bandwidth"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: network, node: 0, bandwidth: 0/s, for: 5s}\n")),
              HasSubstr("faults[0].bandwidth: must be greater than 0/s"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, action: partition, node: 0, reset: true, direction: inbound, for: 5s}\n")),
              HasSubstr("faults[0].reset: a reset ends the connection both ways"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, action: network, node: 0, bandwidth: 1MiB/s, for: 5s}\n")),
              HasSubstr("faults[0].bandwidth: real-only"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, action: partition, node: 0, reset: true, for: 5s}\n")),
              HasSubstr("faults[0].reset: real-only"));
  EXPECT_EQ(ErrorOf(SimFaults("  - {at: 1s, action: network, node: 0, jitter: 30ms, for: 5s}\n")), "")
      << "jitter applies in both modes";
}

std::string EtcdFaults(const std::string& faults) {
  std::string base = RealBase();
  base.replace(base.find("coordination: redis"), 19, "coordination: etcd");
  return base + "faults:\n" + faults;
}

TEST(ScenarioChecks, EtcdRunsInBothModesAndItsMemberFaultsNameAMemberOfIt) {
  std::string sim = SimBase();
  sim.replace(sim.find("  lease_ms"), 0, "  coordination: etcd\n");
  EXPECT_EQ(ErrorOf(sim + "faults:\n  - {at: 1s, for: 2s, action: coordination-outage, member: 1, how: pause}\n"
                          "  - {at: 5s, for: 2s, action: partition, node: leader, member: 0}\n"),
            "")
      << "the simulator models etcd (sim/sim_etcd.h) and its member faults";
  EXPECT_EQ(ErrorOf(EtcdFaults("  - {at: 1s, for: 2s, action: coordination-outage, member: 2, how: pause}\n"
                               "  - {at: 5s, for: 2s, action: coordination-outage, member: 0}\n"
                               "  - {at: 9s, for: 2s, action: coordination-outage}\n")),
            "")
      << "a member crash, a member pause and a whole-cluster outage are all sound";
  EXPECT_THAT(ErrorOf(EtcdFaults("  - {at: 1s, for: 2s, action: coordination-outage, member: 3}\n")),
              HasSubstr("t.yaml:15: faults[0].member: 3 is not a member: the etcd cluster has 3 (0..2)"));
  EXPECT_THAT(ErrorOf(EtcdFaults("  - {at: 1s, for: 2s, action: coordination-outage, how: pause}\n")),
              HasSubstr("faults[0].how: says what happens to one member: needs `member`"));
  EXPECT_THAT(ErrorOf(EtcdFaults("  - {at: 1s, for: 2s, action: coordination-outage, persistence: false}\n")),
              HasSubstr("faults[0].persistence: etcd members keep their data on disk"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, for: 2s, action: coordination-outage, member: 0}\n")),
              HasSubstr("faults[0].member: names one member of a replicated backend: needs coordination: etcd"));
}

// A node's link to one etcd member can be cut or degraded (its client moves to the other members);
// `member` means nothing without etcd or on links that do not lead to coordination.
TEST(ScenarioChecks, APartitionFromOneEtcdMemberNamesAMemberOnTheCoordinationLinks) {
  Result<Scenario> ok = ParseScenario(EtcdFaults("  - {at: 1s, for: 2s, action: partition, node: leader, member: 1}\n"
                                                 "  - {at: 5s, for: 2s, action: network, node: 0, member: 2, delay: 50ms}\n"),
                                      "t.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->faults[0].coordination_member, 1);
  EXPECT_EQ(ok->faults[1].coordination_member, 2);
  EXPECT_THAT(ErrorOf(EtcdFaults("  - {at: 1s, for: 2s, action: partition, node: 0, member: 5}\n")),
              HasSubstr("t.yaml:15: faults[0].member: 5 is not a member: the etcd cluster has 3 (0..2)"));
  EXPECT_THAT(ErrorOf(EtcdFaults("  - {at: 1s, for: 2s, action: partition, node: 0, member: 0, from: nodes}\n")),
              HasSubstr("faults[0].member: cuts the link to one coordination member: needs from: coordination"));
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 1s, for: 2s, action: partition, node: 0, member: 0}\n")),
              HasSubstr("faults[0].member: names one member of a replicated backend: needs coordination: etcd"));
}

// An etcd member cut from the other two (its raft links, no node involved) is sim-only: real
// members derive their IDs from their peer URLs, so the runner has no proxies between them.
TEST(ScenarioChecks, AMemberCutFromItsPeersIsSimOnlyOnEtcdAndNamesTheMember) {
  std::string sim = SimBase();
  sim.replace(sim.find("  lease_ms"), 0, "  coordination: etcd\n");
  Result<Scenario> ok = ParseScenario(sim + "faults:\n  - {at: 1s, for: 3s, action: partition, member: 2, from: peers}\n",
                                      "t.yaml");
  ASSERT_TRUE(ok.ok()) << "a member cut from its peers must load in sim on etcd: " << ok.status().ToString();
  EXPECT_EQ(ok->faults[0].partition_from, PartitionFrom::kPeers);
  EXPECT_EQ(ok->faults[0].coordination_member, 2);
  EXPECT_THAT(ErrorOf(EtcdFaults("  - {at: 1s, for: 3s, action: partition, member: 0, from: peers}\n")),
              HasSubstr("faults[0].from: peers is sim-only: real etcd members derive their IDs from the peer URLs"));
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 1s, for: 3s, action: partition, member: 0, from: peers}\n")),
              HasSubstr("faults[0].from: peers cuts an etcd member from the other members: needs coordination: etcd"));
  EXPECT_THAT(ErrorOf(sim + "faults:\n  - {at: 1s, for: 3s, action: partition, from: peers}\n"),
              HasSubstr("faults[0].member: from: peers needs the member to cut off (0..2)"));
  EXPECT_THAT(ErrorOf(sim + "faults:\n  - {at: 1s, for: 3s, action: partition, member: 3, from: peers}\n"),
              HasSubstr("faults[0].member: 3 is not a member"));
  EXPECT_THAT(ErrorOf(sim + "faults:\n  - {at: 1s, for: 3s, action: partition, node: 0, member: 1, from: peers}\n"),
              HasSubstr("faults[0].node: from: peers cuts an etcd member (`member`) from the other members: no node"));
  EXPECT_THAT(ErrorOf(sim + "faults:\n  - {at: 1s, for: 3s, action: partition, member: 1, from: peers, "
                            "direction: inbound}\n"),
              HasSubstr("faults[0].direction: a member cut from its peers loses its raft links both ways"));
  EXPECT_THAT(ErrorOf(sim + "faults:\n  - {at: 1s, for: 3s, action: partition}\n"), HasSubstr("node"))
      << "a partition of a node still needs `node`";
}

TEST(ScenarioChecks, SentinelFailoversNeedSentinelAndHappenOnceARun) {
  std::string sentinel = RealBase();
  sentinel.replace(sentinel.find("coordination: redis"), 19, "coordination: redis-sentinel");
  std::string sim = SimBase();
  sim.replace(sim.find("  lease_ms"), 0, "  coordination: redis-sentinel\n");
  EXPECT_EQ(ErrorOf(sim + "faults:\n  - {at: 5s, for: 4s, action: coordination-failover}\n"), "")
      << "the simulator models redis-sentinel (a primary, its replica, a promotion)";
  EXPECT_EQ(ErrorOf(sentinel + "faults:\n  - {at: 5s, for: 4s, action: coordination-failover}\n"), "")
      << "a failover after the replica fell behind for 4 s is sound";
  EXPECT_THAT(ErrorOf(RealFaults("  - {at: 5s, action: coordination-failover}\n")),
              HasSubstr("t.yaml:15: faults[0].action: promotes the replica of a Redis primary: needs coordination: "
                        "redis-sentinel"));
  EXPECT_THAT(ErrorOf(sentinel + "faults:\n  - {at: 5s, action: coordination-failover}\n"
                                 "  - {at: 15s, action: coordination-failover}\n"),
              HasSubstr("faults[1].action: a second coordination-failover has no replica left to promote"));
  EXPECT_THAT(ErrorOf(sentinel + "faults:\n  - {at: 5s, every: 10s, for: 2s, action: coordination-failover}\n"),
              HasSubstr("faults[0].every: the dead primary stays down"));
}

// The simulator's redis-sentinel refuses what acts on one coordination server, as real mode does:
// its coordination fault is the failover. A node's links to coordination reach both servers.
TEST(ScenarioChecks, SimSentinelRefusesFaultsOnOneCoordinationServer) {
  std::string sim = SimBase();
  sim.replace(sim.find("  lease_ms"), 0, "  coordination: redis-sentinel\n");
  sim += "faults:\n";
  EXPECT_THAT(ErrorOf(sim + "  - {at: 5s, for: 4s, action: coordination-outage}\n"),
              HasSubstr("faults[0].action: coordination-outage stops one Redis: with coordination: redis-sentinel"));
  EXPECT_EQ(ErrorOf(sim + "  - {at: 5s, for: 4s, action: partition, node: leader}\n"), "")
      << "a node cut from coordination is cut from both servers";
  EXPECT_EQ(ErrorOf(sim + "  - {at: 5s, for: 4s, action: network, node: 0, loss: 0.5}\n"), "")
      << "a node's degraded links to coordination are its links to both servers";
  EXPECT_THAT(ErrorOf(sim + "  - {at: 5s, action: clock-jump, node: coordination, by: +2s}\n"),
              HasSubstr("faults[0].node: clock-jump on coordination moves one server's clock"));
  EXPECT_EQ(ErrorOf(sim + "  - {at: 5s, for: 4s, action: partition, node: leader, from: nodes}\n"
                          "  - {at: 12s, action: crash, node: leader, for: 3s}\n"
                          "  - {at: 20s, action: coordination-failover}\n"),
            "")
      << "node faults and partitions from the other nodes apply with a replica too";
  // A file for both modes may run on redis-sentinel or etcd: each mode runs its own.
  std::string both = RealBase();
  both.replace(both.find("mode: real"), 10, "mode: both");
  both.replace(both.find("coordination: redis"), 19, "coordination: redis-sentinel");
  EXPECT_EQ(ErrorOf(both + "faults:\n  - {at: 5s, for: 4s, action: coordination-failover}\n"), "");
  EXPECT_EQ(ErrorOf(both + "faults:\n  - {at: 5s, for: 4s, action: partition, node: leader}\n"
                           "  - {at: 12s, for: 2s, action: network, node: 1, delay: 50ms}\n  - {at: 15s, action: heal}\n"),
            "")
      << "real mode cuts one node's links to a sentinel group through its own proxies (the connect preload)";
  both.replace(both.find("redis-sentinel"), 14, "etcd");
  EXPECT_EQ(ErrorOf(both + "faults:\n  - {at: 5s, for: 4s, action: coordination-outage, member: 2}\n"), "");
}

TEST(ScenarioChecks, DemoteIsAOneOffRequest) {
  EXPECT_THAT(ErrorOf(SimFaults("  - {at: 10s, action: demote, node: leader, for: 5s}\n")),
              HasSubstr("faults[0].for: demote is a one-off request; it has no duration"));
}

}  // namespace
}  // namespace kvchaos::harness
