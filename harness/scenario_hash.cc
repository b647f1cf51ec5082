// Canonical form and hash of a scenario (see scenario_hash.h). Durations are integer nanoseconds
// and keys sort (nlohmann::json's object is an ordered map), so the dump is byte-for-byte stable.
#include "harness/scenario_hash.h"

#include <cstdint>
#include <cstdio>

#include "core/common/json_text.h"

namespace kvchaos::harness {
namespace {

using nlohmann::json;

// FNV-1a 64, spelled out here so the hash stays fixed whatever other code does with its hashes.
uint64_t Fnv1a64(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

json OptionalNs(const std::optional<Duration>& d) { return d ? json(d->count()) : json(nullptr); }

json FaultJson(const FaultEvent& f) {
  json j{{"action", FaultActionName(f.action)},
         {"class", f.fault_class},
         {"at_ns", f.at.count()},
         {"every_ns", OptionalNs(f.every)},
         {"for_ns", OptionalNs(f.length)},
         {"until_ns", OptionalNs(f.until)}};
  switch (f.action) {
    case FaultAction::kPartition:
      j["from"] = PartitionFromName(f.partition_from);
      j["direction"] = PartitionDirectionName(f.partition_direction);
      j["node"] = f.node.ToString();
      if (f.partition_reset) j["reset"] = true;
      if (f.coordination_member >= 0) j["member"] = f.coordination_member;  // only when set: older hashes stay
      break;
    case FaultAction::kCoordinationOutage:
      j["persistence"] = f.persistence;
      if (f.coordination_member >= 0) j["member"] = f.coordination_member;
      if (f.member_pause) j["how"] = *f.member_pause ? "pause" : "crash";
      break;
    case FaultAction::kClockDrift:
      j["node"] = f.node.ToString();
      j["ppm"] = f.drift_ppm;
      break;
    case FaultAction::kClockJump:
      j["node"] = f.node.ToString();
      j["by_ns"] = f.jump.count();
      break;
    case FaultAction::kStoreCrash:
      j["backend"] = f.backend;
      break;
    case FaultAction::kStoreFault:
      j["backend"] = f.backend;
      j["ops"] = f.rule.ops;
      j["probability"] = f.rule.probability;
      j["errno"] = f.rule.errno_name;
      j["latency_ns"] = OptionalNs(f.rule.latency);
      j["bit_flips"] = f.rule.bit_flips;
      j["hang"] = f.rule.hang;
      // Newer fields enter only when set, so older scenarios keep their hashes.
      if (f.rule.misdirected_read) j["misdirected_read"] = true;
      if (!f.rule.source.empty()) j["source"] = f.rule.source;
      break;
    case FaultAction::kNetwork:
      j["node"] = f.node.ToString();
      j["direction"] = PartitionDirectionName(f.partition_direction);
      j["loss"] = f.net_loss;
      j["duplication"] = f.net_duplication;
      j["delay_ns"] = f.net_delay.count();
      // Newer fields enter only when set, so older scenarios keep their hashes.
      if (f.net_jitter.count() != 0) j["jitter_ns"] = f.net_jitter.count();
      if (f.net_bandwidth != 0) j["bandwidth"] = f.net_bandwidth;
      if (f.partition_from != PartitionFrom::kCoordination) j["from"] = PartitionFromName(f.partition_from);
      if (f.coordination_member >= 0) j["member"] = f.coordination_member;
      break;
    case FaultAction::kSlow:
      j["node"] = f.node.ToString();
      j["wakeup_delay_ns"] = f.slow_wakeup_delay.count();
      break;
    case FaultAction::kHeal:
    case FaultAction::kMetaSwap:
      break;
    default:
      j["node"] = f.node.ToString();
      break;
  }
  return j;
}

json TopologyJson(const Topology& t) {
  json backends = json::array();
  for (const StoreBackend& b : t.backends) backends.push_back({{"name", b.name}, {"faultfs", b.faultfs}});
  json j{{"nodes", t.nodes},
         {"lease_ns", t.lease.count()},
         {"loop_interval_ns", t.loop_interval.count()},
         {"coordination", CoordinationKindName(t.coordination)},
         {"backends", backends}};
  // Only when given (unset means the production defaults), so scenarios written before these keys
  // existed keep their hash.
  if (t.coordination_timeout) j["coordination_timeout_ns"] = t.coordination_timeout->count();
  if (t.coordination_retries) j["coordination_retries"] = *t.coordination_retries;
  if (t.safety_margin) j["safety_margin_ns"] = t.safety_margin->count();
  if (t.forbid_campaign) j["forbid_campaign_ns"] = t.forbid_campaign->count();
  return j;
}

// The bounds added after failover_p99_ms, each only when set, so every scenario written before a
// key keeps its hash.
void BoundsJson(const FailoverBounds& b, json& j) {
  if (b.failover_min_ms) j["failover_min_ms"] = *b.failover_min_ms;
  if (b.failovers_min) j["failovers_min"] = *b.failovers_min;
  if (b.failovers_max) j["failovers_max"] = *b.failovers_max;
  if (b.reelections_min) j["reelections_min"] = *b.reelections_min;
  if (b.reelections_max) j["reelections_max"] = *b.reelections_max;
  if (b.unavailable_p99_ms) j["unavailable_p99_ms"] = *b.unavailable_p99_ms;
  if (b.unavailable_max_ms) j["unavailable_max_ms"] = *b.unavailable_max_ms;
}

}  // namespace

json CanonicalScenarioJson(const Scenario& s) {
  json faults = json::array();
  for (const FaultEvent& f : s.faults) faults.push_back(FaultJson(f));
  const Expectations& e = s.expect;
  json canonical = json{
      {"format", 1},
      {"mode", RunModeName(s.mode)},
      {"duration_ns", s.duration.count()},
      {"topology", TopologyJson(s.topology)},
      {"workload",
       {{"save_rate_per_s", s.workload.save_rate_per_s},
        {"load_rate_per_s", s.workload.load_rate_per_s},
        {"block_size_bytes", s.workload.block_size_bytes},
        {"key_space", s.workload.key_space},
        {"clients", s.workload.clients}}},
      {"faults", faults},
      {"expect",
       {{"no_stale_writes", e.no_stale_writes},
        {"no_corrupt_reads", e.no_corrupt_reads},
        {"acked_blocks_readable", e.acked_blocks_readable},
        {"no_dual_acting", e.no_dual_acting},
        {"no_unnecessary_failover", e.no_unnecessary_failover},
        {"failover_p99_ms", e.failover_p99_ms ? json(*e.failover_p99_ms) : json(nullptr)},
        {"leader_within_ms", e.leader_within_ms ? json(*e.leader_within_ms) : json(nullptr)},
        {"min_ops", e.min_ops}}},
  };
  // Only when set, so every scenario written before the key keeps its hash.
  if (s.topology.durable_commit) canonical["topology"]["durable_commit"] = true;
  if (s.topology.inline_header) canonical["topology"]["inline_header"] = true;
  if (e.leader_stops_by_lease_end) canonical["expect"]["leader_stops_by_lease_end"] = true;
  // The history expectations default on: only a scenario that turns one off changes its hash.
  if (!e.linearizable) canonical["expect"]["linearizable"] = false;
  if (!e.no_lost_writes) canonical["expect"]["no_lost_writes"] = false;
  if (!e.monotonic_reads) canonical["expect"]["monotonic_reads"] = false;
  if (!e.read_your_writes) canonical["expect"]["read_your_writes"] = false;
  BoundsJson(e, canonical["expect"]);
  for (const auto& [name, bounds] : e.classes) {
    json& j = canonical["expect"]["classes"][name];
    if (bounds.failover_p99_ms) j["failover_p99_ms"] = *bounds.failover_p99_ms;
    BoundsJson(bounds, j);
  }
  if (!e.max_errors.empty()) canonical["expect"]["max_errors"] = e.max_errors;
  return canonical;
}

std::string ScenarioHash(const Scenario& scenario) {
  const uint64_t h = Fnv1a64(DumpJson(CanonicalScenarioJson(scenario)));
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace kvchaos::harness
