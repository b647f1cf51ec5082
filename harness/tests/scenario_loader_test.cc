// Loading scenario files: a complete file becomes the typed model with units parsed, and every
// kind of bad input — syntax, unknown keys, wrong types, out-of-range values — is an error that
// names file, line and key. Cross-field checks are in scenario_checks_test.cc.
#include "harness/scenario_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "harness/tests/scenario_test_util.h"

namespace kvchaos::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ErrorOf;
using testing::RealBase;
using testing::SimBase;
using namespace std::chrono_literals;

TEST(ScenarioLoader, ParsesEveryFieldIntoTheTypedModel) {
  const std::string text = RealBase() +
                           "  load_rate_per_s: 20.5\n"
                           "  block_size: 64KiB\n"
                           "  key_space: 5000\n"
                           "  clients: 4\n"
                           "description: |\n"
                           "  Everything at once.\n"
                           "faults:\n"
                           "  - {at: 5s, action: crash, node: leader, for: 10s, class: leader-crash}\n"
                           "  - {at: 20s, action: pause, node: 1, for: 4s}\n"
                           "  - {at: 30s, action: coordination-outage, for: 1500ms, persistence: false}\n"
                           "  - {at: 1000, every: 10s, for: 2s, until: 50s, action: store-fault, backend: p1,\n"
                           "     ops: [read, write], probability: 0.5, errno: EIO}\n"
                           "  - {at: 40s, action: store-fault, backend: p1, latency: 250ms, for: 5s}\n"
                           "  - {at: 41s, action: store-fault, backend: p1, bit_flips: 3, for: 5s}\n"
                           "  - {at: 50s, action: demote, node: leader}\n"
                           "expect:\n"
                           "  failover_p99_ms: 4000\n"
                           "  no_unnecessary_failover: true\n"
                           "  min_ops: 100\n";
  Result<Scenario> loaded = ParseScenario(text, "real.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Scenario& s = *loaded;
  EXPECT_EQ(s.file, "real.yaml");
  EXPECT_EQ(s.name, "base-real");
  EXPECT_EQ(s.description, "Everything at once.\n");
  EXPECT_EQ(s.mode, RunMode::kReal);
  EXPECT_EQ(s.seed, 1u) << "seed defaults to 1 when the file gives none";
  EXPECT_EQ(s.duration, Duration(60s));
  EXPECT_EQ(s.topology.nodes, 3);
  EXPECT_EQ(s.topology.lease, Duration(3s));
  EXPECT_EQ(s.topology.loop_interval, Duration(200ms));
  EXPECT_EQ(s.topology.coordination, CoordinationKind::kRedis);
  ASSERT_EQ(s.topology.backends.size(), 2u);
  EXPECT_EQ(s.topology.backends[0].name, "p1");
  EXPECT_TRUE(s.topology.backends[0].faultfs);
  EXPECT_FALSE(s.topology.backends[1].faultfs);
  EXPECT_EQ(s.workload.save_rate_per_s, 50);
  EXPECT_EQ(s.workload.load_rate_per_s, 20.5);
  EXPECT_EQ(s.workload.block_size_bytes, 64u * 1024);
  EXPECT_EQ(s.workload.key_space, 5000);
  EXPECT_EQ(s.workload.clients, 4);

  ASSERT_EQ(s.faults.size(), 7u);
  const FaultEvent& crash = s.faults[0];
  EXPECT_EQ(crash.action, FaultAction::kCrash);
  EXPECT_EQ(crash.fault_class, "leader-crash");
  EXPECT_EQ(crash.at, Duration(5s));
  EXPECT_EQ(crash.length, Duration(10s));
  EXPECT_EQ(crash.node, NodeRef::Of(NodeRef::Kind::kLeader));
  EXPECT_EQ(crash.line, 21);
  EXPECT_EQ(s.faults[1].node, NodeRef::Index(1));
  EXPECT_EQ(s.faults[1].fault_class, "pause") << "the class defaults to the action";
  EXPECT_EQ(s.faults[2].action, FaultAction::kCoordinationOutage);
  EXPECT_FALSE(s.faults[2].persistence);
  EXPECT_EQ(s.faults[2].length, Duration(1500ms));
  const FaultEvent& eio = s.faults[3];
  EXPECT_EQ(eio.at, Duration(1s)) << "a bare number is milliseconds";
  EXPECT_EQ(eio.every, Duration(10s));
  EXPECT_EQ(eio.until, Duration(50s));
  EXPECT_EQ(eio.backend, "p1");
  EXPECT_EQ(eio.rule.ops, (std::vector<std::string>{"read", "write"}));
  EXPECT_EQ(eio.rule.probability, 0.5);
  EXPECT_EQ(eio.rule.errno_name, "EIO");
  EXPECT_EQ(eio.rule.errno_value, EIO);
  EXPECT_EQ(s.faults[4].rule.latency, Duration(250ms));
  EXPECT_EQ(s.faults[5].rule.bit_flips, 3);
  EXPECT_EQ(s.faults[5].rule.ops, std::vector<std::string>{"read"}) << "bit flips default to reads";
  EXPECT_EQ(s.faults[6].action, FaultAction::kDemote);

  EXPECT_EQ(s.expect.failover_p99_ms, 4000);
  EXPECT_TRUE(s.expect.no_unnecessary_failover);
  EXPECT_EQ(s.expect.min_ops, 100);
  EXPECT_TRUE(s.expect.no_stale_writes) << "safety expectations default to on";
  EXPECT_TRUE(s.expect.no_corrupt_reads);
  EXPECT_TRUE(s.expect.acked_blocks_readable);
}

TEST(ScenarioLoader, ParsesStoreCrashesAndDurableCommits) {
  std::string text = RealBase() + "faults:\n  - {at: 3s, every: 5s, action: store-crash, backend: p1}\n";
  text.insert(text.find("  backends:"), "  durable_commit: true\n");
  Result<Scenario> loaded = ParseScenario(text, "real.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->topology.durable_commit);
  ASSERT_EQ(loaded->faults.size(), 1u);
  EXPECT_EQ(loaded->faults[0].action, FaultAction::kStoreCrash);
  EXPECT_EQ(loaded->faults[0].backend, "p1");
  EXPECT_EQ(loaded->faults[0].every, Duration(5s));
  EXPECT_EQ(loaded->faults[0].fault_class, "store-crash");
  Result<Scenario> plain = ParseScenario(RealBase(), "real.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->topology.durable_commit) << "upstream's cache semantics are the default";
}

// A file for both modes: checked as each mode runs it, and run as a sim copy (the simulator's
// Redis) and a real copy (a redis-server).
TEST(ScenarioLoader, AFileForBothModesRunsAsASimCopyAndARealCopy) {
  std::string text = RealBase() + "faults:\n  - {at: 10s, for: 5s, action: store-fault, backend: p1, errno: EIO}\n";
  text.replace(text.find("mode: real"), 10, "mode: both");
  Result<Scenario> loaded = ParseScenario(text, "both.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->both_modes);
  const std::vector<Scenario> variants = ModeVariants(*loaded);
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0].mode, RunMode::kSim);
  EXPECT_EQ(variants[0].topology.coordination, CoordinationKind::kSimRedis) << "redis is the simulator's in sim mode";
  EXPECT_EQ(variants[1].mode, RunMode::kReal);
  EXPECT_EQ(variants[1].topology.coordination, CoordinationKind::kRedis);
  EXPECT_EQ(variants[0].faults.size(), 1u);
  EXPECT_EQ(ModeVariants(*ParseScenario(RealBase(), "real.yaml")).size(), 1u) << "a one-mode file is one run";

  // What only one mode refuses says which mode; what both refuse is said once.
  std::string slow = text + "  - {at: 20s, for: 1s, action: slow, node: 1, wakeup_delay: 10ms}\n";
  EXPECT_THAT(ErrorOf(slow, "both.yaml"), HasSubstr("both.yaml:16: faults[1].action: in mode real: slow needs the simulator"));
  std::string file = text;
  file.replace(file.find("coordination: redis"), 19, "coordination: file");
  const std::string error = ErrorOf(file, "both.yaml");
  EXPECT_THAT(error, HasSubstr("both.yaml:8: topology.coordination: a file for both modes runs on Redis"));
  EXPECT_EQ(error.find(": in mode"), std::string::npos) << "a problem of both copies must be said once: " << error;
}

TEST(ScenarioLoader, FailoverCountLowerBoundAndErrorBudgets) {
  Result<Scenario> s = ParseScenario(RealBase() + "expect:\n  failovers: {min: 1, max: 3}\n  failover_min_ms: 2800\n"
                                                  "  max_errors: {StoreUnhealthy: 0}\n", "e.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->expect.failovers_min, 1);
  EXPECT_EQ(s->expect.failovers_max, 3);
  EXPECT_EQ(s->expect.failover_min_ms, 2800);
  EXPECT_EQ(s->expect.max_errors.at("StoreUnhealthy"), 0);
  EXPECT_THAT(ErrorOf(RealBase() + "expect:\n  failovers: {min: 4, max: 3}\n"),
              HasSubstr("t.yaml:15: expect.failovers: min 4 is above max 3"));
  Result<Scenario> re = ParseScenario(RealBase() + "expect:\n  reelections: {max: 0}\n", "e.yaml");
  ASSERT_TRUE(re.ok()) << re.status().ToString();
  EXPECT_EQ(re->expect.reelections_max, 0);
  EXPECT_FALSE(re->expect.reelections_min);
  EXPECT_THAT(ErrorOf(RealBase() + "expect:\n  reelections: {min: 2, max: 1}\n"),
              HasSubstr("t.yaml:15: expect.reelections: min 2 is above max 1"));
  EXPECT_THAT(ErrorOf(RealBase() + "expect:\n  failovers: {max: 1}\n  reelections: {min: 2}\n"),
              HasSubstr("expect.reelections: min 2 is above failovers.max 1"));
  EXPECT_THAT(ErrorOf(RealBase() + "expect:\n  reelections: {most: 1}\n"), HasSubstr("expect.reelections.most"));
  EXPECT_THAT(ErrorOf(RealBase() + "expect:\n  max_errors: {StoreUnhealty: 0}\n"),
              HasSubstr("expect.max_errors.StoreUnhealty: 'StoreUnhealty' is not an error code name"));
  EXPECT_THAT(ErrorOf(SimBase() + "expect:\n  max_errors: {Timeout: 0}\n"),
              HasSubstr("expect.max_errors: counts data-plane errors, but the run has no data plane"));
}

// One run mixes crashes (lease + loop) with pauses (longer): bounds per fault class, and the data
// plane's longest gap, each checked for sense before a run.
TEST(ScenarioLoader, PerClassBoundsAndUnavailabilityBounds) {
  const std::string faults = "faults:\n  - {at: 5s, action: crash, node: leader, for: 10s, class: leader-crash}\n"
                             "  - {at: 30s, action: pause, node: leader, for: 4s}\n";
  Result<Scenario> s = ParseScenario(RealBase() + faults +
                                         "expect:\n  unavailable_p99_ms: 3000\n  unavailable_max_ms: 4000\n"
                                         "  classes:\n    leader-crash: {failover_p99_ms: 3500, failovers: {min: 1}}\n"
                                         "    pause: {unavailable_max_ms: 6000, reelections: {max: 0}}\n",
                                     "e.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->expect.unavailable_p99_ms, 3000);
  EXPECT_EQ(s->expect.unavailable_max_ms, 4000);
  ASSERT_EQ(s->expect.classes.size(), 2u);
  EXPECT_EQ(s->expect.classes.at("leader-crash").failover_p99_ms, 3500);
  EXPECT_EQ(s->expect.classes.at("leader-crash").failovers_min, 1);
  EXPECT_EQ(s->expect.classes.at("pause").unavailable_max_ms, 6000);
  EXPECT_EQ(s->expect.classes.at("pause").reelections_max, 0);
  EXPECT_FALSE(s->expect.failover_p99_ms) << "a class's bound is not the run's";
  EXPECT_FALSE(s->expect.leader_stops_by_lease_end) << "off unless asked for";
  EXPECT_TRUE(ParseScenario(RealBase() + "expect:\n  leader_stops_by_lease_end: true\n", "e.yaml")->expect.leader_stops_by_lease_end);
  EXPECT_TRUE(s->expect.linearizable && s->expect.no_lost_writes && s->expect.monotonic_reads && s->expect.read_your_writes)
      << "the history expectations are on unless turned off";
  Result<Scenario> off = ParseScenario(RealBase() + "expect:\n  linearizable: false\n  read_your_writes: false\n", "e.yaml");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->expect.linearizable);
  EXPECT_FALSE(off->expect.read_your_writes);
  EXPECT_TRUE(off->expect.no_lost_writes);
  Result<Scenario> typo = ParseScenario(RealBase() + "expect:\n  linearizable: maybe\n", "e.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("linearizable"), std::string::npos) << typo.status().message();

  EXPECT_THAT(ErrorOf(RealBase() + faults + "expect:\n  classes:\n    crash: {failover_p99_ms: 2500}\n"),
              HasSubstr("expect.classes.crash: no fault has class 'crash' (classes of this file: leader-crash, pause)"));
  EXPECT_THAT(ErrorOf(RealBase() + faults + "expect:\n  classes:\n    pause: {}\n"),
              HasSubstr("expect.classes.pause: sets no bound"));
  EXPECT_THAT(ErrorOf(RealBase() + faults + "expect:\n  classes:\n    pause: {failovers: {min: 3, max: 2}}\n"),
              HasSubstr("expect.classes.pause.failovers: min 3 is above max 2"));
  EXPECT_THAT(ErrorOf(RealBase() + faults + "expect:\n  classes:\n    pause: {failover_p99_ms: 100}\n"),
              HasSubstr("expect.classes.pause.failover_p99_ms: 100 ms cannot be met: after a leader pause"));
  EXPECT_THAT(ErrorOf(RealBase() + faults + "expect:\n  classes:\n    pause: {max_errors: {Timeout: 0}}\n"),
              HasSubstr("expect.classes.pause.max_errors"));
  EXPECT_THAT(ErrorOf(RealBase() + faults + "expect:\n  classes:\n    Pause: {failovers: {max: 1}}\n"),
              HasSubstr("expect.classes.Pause: no fault has class 'Pause'"));
  EXPECT_THAT(ErrorOf(RealBase() + faults + "expect:\n  classes:\n    pause: {unavailable_max_ms: 0}\n"),
              HasSubstr("expect.classes.pause.unavailable_max_ms: value 0 is out of range: must be at least 1"));
  EXPECT_THAT(ErrorOf(RealBase() + faults + "expect:\n  classes:\n    pause: {failover_p99: 5000}\n"),
              HasSubstr("expect.classes.pause.failover_p99"));
  EXPECT_THAT(ErrorOf(RealBase() + "expect:\n  unavailable_p99_ms: 5000\n  unavailable_max_ms: 4000\n"),
              HasSubstr("expect.unavailable_p99_ms: is above unavailable_max_ms (4000)"));
}

TEST(ScenarioLoader, SimModeDefaultsToTheSimulatorsBackendAndParsesClockFaults) {
  Result<Scenario> s = ParseScenario(SimBase() +
                                         "faults:\n"
                                         "  - {at: 10s, action: clock-jump, node: 2, by: -3s}\n"
                                         "  - {at: 20s, action: clock-drift, node: coordination, ppm: -150.5, for: 30s}\n"
                                         "  - {at: 30s, action: partition, node: leader, from: coordination,\n"
                                         "     direction: outbound, for: 5s}\n"
                                         "  - {at: 40s, action: heal}\n"
                                         "  - {at: 50s, action: network, node: 1, loss: 0.2, duplication: 0.05,\n"
                                         "     delay: 30ms, direction: inbound, for: 10s}\n"
                                         "  - {at: 60s, action: slow, node: follower, wakeup_delay: 5ms, for: 10s}\n",
                                     "sim.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->seed, 7u);
  EXPECT_EQ(s->topology.coordination, CoordinationKind::kSimRedis);
  EXPECT_EQ(s->faults[0].jump, -Duration(3s));
  EXPECT_EQ(s->faults[1].node, NodeRef::Of(NodeRef::Kind::kCoordination));
  EXPECT_EQ(s->faults[1].drift_ppm, -150.5);
  EXPECT_EQ(s->faults[2].partition_from, PartitionFrom::kCoordination);
  EXPECT_EQ(s->faults[2].partition_direction, PartitionDirection::kOutbound);
  EXPECT_EQ(s->faults[3].action, FaultAction::kHeal);
  const FaultEvent& net = s->faults[4];
  EXPECT_EQ(net.action, FaultAction::kNetwork);
  EXPECT_EQ(net.net_loss, 0.2);
  EXPECT_EQ(net.net_duplication, 0.05);
  EXPECT_EQ(net.net_delay, Duration(30ms));
  EXPECT_EQ(net.partition_direction, PartitionDirection::kInbound);
  EXPECT_EQ(s->faults[5].action, FaultAction::kSlow);
  EXPECT_EQ(s->faults[5].slow_wakeup_delay, Duration(5ms));
}

TEST(ScenarioLoader, SeedsUpToTwoToThe64MinusOneAreAccepted) {
  std::string text = SimBase();
  text.replace(text.find("seed: 7"), 7, "seed: 18446744073709551615");
  Result<Scenario> s = ParseScenario(text, "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->seed, 18446744073709551615ull);
  text.replace(text.find("seed: 18446744073709551615"), 26, "seed: -5");
  EXPECT_THAT(ErrorOf(text), HasSubstr("t.yaml:3: seed: expected a non-negative 64-bit integer"));
}

TEST(ScenarioLoader, YamlSyntaxErrorsNameFileLineAndColumn) {
  const std::string error = ErrorOf("name: x\nmode: [sim\n", "broken.yaml");
  EXPECT_THAT(error, HasSubstr("broken.yaml:")) << error;
  EXPECT_THAT(error, HasSubstr("YAML syntax")) << error;
}

TEST(ScenarioLoader, AnEmptyFileOrAListIsNotAScenario) {
  EXPECT_THAT(ErrorOf("", "e.yaml"), HasSubstr("e.yaml:1: (top level): the file is empty"));
  EXPECT_THAT(ErrorOf("- a\n- b\n", "l.yaml"), HasSubstr("l.yaml:1: (top level): a scenario must be a mapping"));
}

TEST(ScenarioLoader, UnknownKeysAreErrorsAtTheirLineListingTheAllowedKeys) {
  EXPECT_THAT(ErrorOf(SimBase() + "colour: blue\n"), HasSubstr("t.yaml:12: colour: unknown key (allowed here: "));
  const std::string nested = ErrorOf(SimBase() + "faults:\n  - at: 1s\n    action: crash\n    node: 0\n    for: 1s\n"
                                                 "    signal: 9\n");
  EXPECT_THAT(nested, HasSubstr("t.yaml:17: faults[0].signal: unknown key (allowed here: "));
  EXPECT_THAT(nested, HasSubstr("action, at, class, every, for, node, until"));
  std::string topology = SimBase();
  topology.insert(topology.find("workload:"), "  lease_seconds: 2\n");
  EXPECT_THAT(ErrorOf(topology), HasSubstr("t.yaml:9: topology.lease_seconds: unknown key"));
  std::string typo = SimBase();
  typo.insert(typo.find("workload:"), "  loop_interval: 100\n");
  EXPECT_THAT(ErrorOf(typo), HasSubstr("topology.loop_interval: unknown key (allowed here: backends, coordination, "
                                       "coordination_retries, coordination_timeout_ms, durable_commit, forbid_campaign_ms, "
                                       "inline_header, lease_ms, loop_interval_ms, nodes, safety_margin_ms); did you mean 'loop_interval_ms'?"));
  EXPECT_THAT(ErrorOf(SimBase() + "faults:\n  - {at: 1s, action: crahs, node: 0}\n"),
              HasSubstr("expected one of crash, stop, restart, pause, resume, demote, partition, heal, "
                        "coordination-outage, coordination-failover, clock-drift, clock-jump, store-fault, "
                        "store-crash, network, slow, meta-swap; did you mean 'crash'?"));
}

TEST(ScenarioLoader, WrongTypesSayWhatWasExpectedAndWhatWasGiven) {
  std::string quoted = SimBase();
  quoted.replace(quoted.find("nodes: 3"), 8, "nodes: \"3\"");
  EXPECT_THAT(ErrorOf(quoted), HasSubstr("t.yaml:6: topology.nodes: expected the number of metadata nodes, 1 to 64, "
                                         "got string \"3\""));
  std::string seed = SimBase();
  seed.replace(seed.find("seed: 7"), 7, "seed: abc");
  EXPECT_THAT(ErrorOf(seed), HasSubstr("t.yaml:3: seed: expected a non-negative 64-bit integer"));
  EXPECT_THAT(ErrorOf(SimBase() + "faults: {at: 1s}\n"), HasSubstr("t.yaml:12: faults: expected a list of fault "
                                                                    "events, got a mapping"));
  EXPECT_THAT(ErrorOf(SimBase() + "faults:\n  - crash\n"),
              HasSubstr("t.yaml:13: faults[0]: expected a fault event: a mapping with at, action and the action's own "
                        "keys, got string \"crash\""));
  EXPECT_THAT(ErrorOf(SimBase() + "expect: yes\n"), HasSubstr("t.yaml:12: expect: expected a mapping of expectations"));
}

// The elector and client settings of `topology`: absent means the production defaults (unset in
// the model), given means exactly that value in both modes.
TEST(ScenarioLoader, TopologyElectorAndClientSettings) {
  Result<Scenario> defaults = ParseScenario(SimBase(), "d.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_FALSE(defaults->topology.coordination_timeout.has_value());
  EXPECT_FALSE(defaults->topology.coordination_retries.has_value());
  EXPECT_FALSE(defaults->topology.safety_margin.has_value());
  EXPECT_FALSE(defaults->topology.forbid_campaign.has_value());
  std::string text = SimBase();
  text.insert(text.find("workload:"),
              "  coordination_timeout_ms: 5000\n"
              "  coordination_retries: 3\n"
              "  safety_margin_ms: 250\n"
              "  forbid_campaign_ms: 1500\n");
  Result<Scenario> set = ParseScenario(text, "s.yaml");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->topology.coordination_timeout, Duration(5s));
  EXPECT_EQ(set->topology.coordination_retries, 3);
  EXPECT_EQ(set->topology.safety_margin, Duration(250ms));
  EXPECT_EQ(set->topology.forbid_campaign, Duration(1500ms));
  // A margin of 0 and no retries are settings, not "unset".
  std::string zero = SimBase();
  zero.insert(zero.find("workload:"), "  safety_margin_ms: 0\n  coordination_retries: 0\n");
  Result<Scenario> zeros = ParseScenario(zero, "z.yaml");
  ASSERT_TRUE(zeros.ok()) << zeros.status().ToString();
  EXPECT_EQ(zeros->topology.safety_margin, Duration(0));
  EXPECT_EQ(zeros->topology.coordination_retries, 0);
}

TEST(ScenarioLoader, BadTopologyElectorAndClientSettingsNameFileLineAndKey) {
  auto with = [](const std::string& line) {
    std::string text = SimBase();
    text.insert(text.find("workload:"), line);  // line 9
    return ErrorOf(text);
  };
  EXPECT_THAT(with("  coordination_timeout_ms: 0\n"),
              HasSubstr("t.yaml:9: topology.coordination_timeout_ms: value 0 is out of range: must be between 1 and "
                        "3600000"));
  EXPECT_THAT(with("  coordination_retries: 101\n"),
              HasSubstr("t.yaml:9: topology.coordination_retries: value 101 is out of range: must be between 0 and "
                        "100"));
  EXPECT_THAT(with("  safety_margin_ms: -1\n"),
              HasSubstr("t.yaml:9: topology.safety_margin_ms: value -1 is out of range"));
  EXPECT_THAT(with("  forbid_campaign_ms: 2s\n"), HasSubstr("t.yaml:9: topology.forbid_campaign_ms: expected"));
  EXPECT_THAT(with("  coordination_timeout: 500\n"), HasSubstr("t.yaml:9: topology.coordination_timeout: unknown key"));
}

TEST(ScenarioLoader, OutOfRangeAndMisspelledValuesAreRejected) {
  std::string nodes = SimBase();
  nodes.replace(nodes.find("nodes: 3"), 8, "nodes: 100");
  EXPECT_THAT(ErrorOf(nodes), HasSubstr("t.yaml:6: topology.nodes: value 100 is out of range: must be between 1 and 64"));
  std::string mode = SimBase();
  mode.replace(mode.find("mode: sim"), 9, "mode: simulation");
  EXPECT_THAT(ErrorOf(mode), HasSubstr("t.yaml:2: mode: invalid value \"simulation\": expected one of sim, real"));
  std::string duration = SimBase();
  duration.replace(duration.find("duration: 2m"), 12, "duration: 2 fortnights");
  EXPECT_THAT(ErrorOf(duration), HasSubstr("t.yaml:4: duration: invalid value \"2 fortnights\": expected a duration"));
  EXPECT_THAT(ErrorOf(SimBase() + "faults:\n  - {at: 1s, action: explode, node: 0}\n"),
              HasSubstr("t.yaml:13: faults[0].action: invalid value \"explode\": expected one of crash, stop"));
  EXPECT_THAT(ErrorOf(SimBase() + "faults:\n  - {at: 1s, action: crash, node: boss, for: 1s}\n"),
              HasSubstr("t.yaml:13: faults[0].node: invalid value \"boss\": expected a node index (0-based), or "
                        "leader, follower or all"));
  EXPECT_THAT(ErrorOf(SimBase() + "faults:\n  - {at: 1s, action: clock-jump, node: 0, by: 5s}\n"),
              HasSubstr("faults[0].by: invalid value \"5s\": expected a signed duration such as +5s or -2s"));
}

TEST(ScenarioLoader, MissingRequiredKeysAreNamed) {
  EXPECT_THAT(ErrorOf("mode: sim\nduration: 1m\ntopology: {nodes: 1, lease_ms: 100, loop_interval_ms: 10}\n"),
              HasSubstr("t.yaml:1: name: missing (required)"));
  EXPECT_THAT(ErrorOf(SimBase() + "faults:\n  - {at: 1s, action: clock-drift, node: 0}\n"),
              HasSubstr("t.yaml:13: faults[0].ppm: missing (required)"));
  const std::string no_action = ErrorOf(SimBase() + "faults:\n  - {at: 1s, node: 0}\n");
  EXPECT_THAT(no_action, HasSubstr("t.yaml:13: faults[0].action: missing (required)"));
  EXPECT_THAT(no_action, Not(HasSubstr("faults[0].ppm"))) << "no branch applies while the action is unknown";
}

TEST(ScenarioLoader, DuplicateKeysAndOversizedIntegersAreCaughtBeforeTheSchema) {
  EXPECT_THAT(ErrorOf(SimBase() + "mode: real\n"), HasSubstr("t.yaml:12: mode: duplicate key (first given on line 2)"));
  std::string seed = SimBase();
  seed.replace(seed.find("seed: 7"), 7, "seed: 99999999999999999999999");
  EXPECT_THAT(ErrorOf(seed), HasSubstr("t.yaml:3: seed: integer 99999999999999999999999 does not fit in 64 bits"));
}

TEST(ScenarioLoader, AnAliasBombIsRefusedNamingTheFileInsteadOfExpanded) {
  // Nine levels of ten aliases: 10^9 nodes once expanded (the loader reached 8.9 GB on one).
  std::string text = SimBase() + "description: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    text += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  const std::string error = ErrorOf(text, "bomb.yaml");
  EXPECT_THAT(error, HasSubstr("bomb.yaml:"));
  EXPECT_THAT(error, HasSubstr("the document expands to more than 100000 nodes"));
}

TEST(ScenarioLoader, InvalidUtf8IsRefusedNamingLineAndField) {
  std::string text = SimBase();
  text.replace(text.find("base-sim"), 8, "base-\xFF\xFEsim");
  EXPECT_THAT(ErrorOf(text), HasSubstr("t.yaml:1: name: the value is not valid UTF-8 (byte 0xFF at offset 5)"));
  EXPECT_THAT(ErrorOf(SimBase() + "description: \"caf\xC3\"\n"),
              HasSubstr("t.yaml:12: description: the value is not valid UTF-8 (byte 0xC3 at offset 3)"));
}

TEST(ScenarioLoader, ReportsEveryProblemAtOnceInLineOrder) {
  std::string text = SimBase() + "colour: blue\nfaults:\n  - {at: 1s, action: crash, node: -1, for: 1s}\n";
  text.replace(text.find("nodes: 3"), 8, "nodes: 0");
  const std::string error = ErrorOf(text);
  const size_t nodes = error.find("t.yaml:6: topology.nodes");
  const size_t colour = error.find("t.yaml:12: colour");
  const size_t node = error.find("t.yaml:14: faults[0].node");
  ASSERT_NE(nodes, std::string::npos) << error;
  ASSERT_NE(colour, std::string::npos) << error;
  ASSERT_NE(node, std::string::npos) << error;
  EXPECT_LT(nodes, colour);
  EXPECT_LT(colour, node);
}

TEST(ScenarioLoader, LoadsFromDiskAndNamesMissingFiles) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kvchaos_loader_test_" + std::to_string(::getpid()));
  struct RemoveOnExit {
    std::filesystem::path path;
    ~RemoveOnExit() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } cleanup{dir};
  std::filesystem::create_directories(dir / "sub");
  const std::string path = (dir / "sub" / "a.yaml").string();
  std::ofstream(path) << SimBase();
  std::ofstream((dir / "b.yml").string()) << SimBase();
  std::ofstream((dir / "notes.txt").string()) << "not a scenario";
  Result<Scenario> s = LoadScenarioFile(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->file, path);
  Result<std::vector<std::string>> files = FindScenarioFiles(dir.string());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(*files, (std::vector<std::string>{(dir / "b.yml").string(), path}));
  Result<Scenario> missing = LoadScenarioFile((dir / "nope.yaml").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.yaml: cannot read scenario"));
  EXPECT_FALSE(FindScenarioFiles((dir / "nope").string()).ok());
}

}  // namespace
}  // namespace kvchaos::harness
