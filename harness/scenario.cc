// Names of the scenario model's enums, as they are spelled in scenario files and results.
#include "harness/scenario.h"

#include <array>
#include <chrono>
#include <utility>

namespace kvchaos::harness {
namespace {

constexpr std::array<std::pair<FaultAction, std::string_view>, 17> kActionNames{{
    {FaultAction::kCrash, "crash"},
    {FaultAction::kStop, "stop"},
    {FaultAction::kRestart, "restart"},
    {FaultAction::kPause, "pause"},
    {FaultAction::kResume, "resume"},
    {FaultAction::kDemote, "demote"},
    {FaultAction::kPartition, "partition"},
    {FaultAction::kHeal, "heal"},
    {FaultAction::kCoordinationOutage, "coordination-outage"},
    {FaultAction::kCoordinationFailover, "coordination-failover"},
    {FaultAction::kClockDrift, "clock-drift"},
    {FaultAction::kClockJump, "clock-jump"},
    {FaultAction::kStoreFault, "store-fault"},
    {FaultAction::kStoreCrash, "store-crash"},
    {FaultAction::kNetwork, "network"},
    {FaultAction::kSlow, "slow"},
    {FaultAction::kMetaSwap, "meta-swap"},
}};

}  // namespace

std::string_view RunModeName(RunMode mode) { return mode == RunMode::kSim ? "sim" : "real"; }

std::string_view CoordinationKindName(CoordinationKind kind) {
  switch (kind) {
    case CoordinationKind::kMemory: return "memory";
    case CoordinationKind::kFile: return "file";
    case CoordinationKind::kRedis: return "redis";
    case CoordinationKind::kSimRedis: return "sim-redis";
    case CoordinationKind::kEtcd: return "etcd";
    case CoordinationKind::kRedisSentinel: return "redis-sentinel";
  }
  return "unknown";
}

std::string_view FaultActionName(FaultAction action) {
  for (const auto& [a, name] : kActionNames) {
    if (a == action) return name;
  }
  return "unknown";
}

bool FaultActionFromName(std::string_view name, FaultAction* action) {
  for (const auto& [a, n] : kActionNames) {
    if (n == name) {
      *action = a;
      return true;
    }
  }
  return false;
}

std::string NodeRef::ToString() const {
  switch (kind) {
    case Kind::kIndex: return std::to_string(index);
    case Kind::kLeader: return "leader";
    case Kind::kFollower: return "follower";
    case Kind::kAll: return "all";
    case Kind::kCoordination: return "coordination";
  }
  return "unknown";
}

std::string_view PartitionFromName(PartitionFrom from) {
  switch (from) {
    case PartitionFrom::kCoordination: return "coordination";
    case PartitionFrom::kNodes: return "nodes";
    case PartitionFrom::kAll: return "all";
    case PartitionFrom::kPeers: return "peers";
  }
  return "unknown";
}

std::string_view PartitionDirectionName(PartitionDirection direction) {
  switch (direction) {
    case PartitionDirection::kBoth: return "both";
    case PartitionDirection::kInbound: return "inbound";
    case PartitionDirection::kOutbound: return "outbound";
  }
  return "unknown";
}

namespace {
// The store's block files inside a backend (`<3 hex>/<32 hex>`, core/store/block_id.h; the same
// glob as sim::kBlockFileGlob): a misdirected read's default source, without temp and probe files.
// Two literals, since three question marks before a slash would read as a trigraph.
constexpr const char* kBlockFiles = "???" "/????????????????????????????????";
}  // namespace

nlohmann::json StoreFaultRuleJson(const std::string& id, const StoreFaultRule& rule) {
  nlohmann::json j = {{"id", id}, {"path", "**"}};
  if (!rule.ops.empty()) j["ops"] = rule.ops;
  if (rule.probability < 1.0) j["probability"] = rule.probability;
  if (!rule.errno_name.empty()) {
    j["action"] = "errno";
    j["errno"] = rule.errno_name;
  } else if (rule.latency) {
    j["action"] = "latency";
    j["latency"] = std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(*rule.latency).count()) + "us";
  } else if (rule.bit_flips > 0) {
    j["action"] = "flip_read_bits";
    j["bits"] = rule.bit_flips;
  } else if (rule.misdirected_read) {
    j["action"] = "misdirected_read";
    j["source"] = rule.source.empty() ? std::string(kBlockFiles) : rule.source;
  } else {
    j["action"] = "hang";
  }
  return j;
}

bool FailoverBounds::any() const {
  return failover_p99_ms || failover_min_ms || failovers_min || failovers_max || reelections_min || reelections_max ||
         unavailable_p99_ms || unavailable_max_ms;
}

std::vector<Scenario> ModeVariants(const Scenario& scenario) {
  if (!scenario.both_modes) return {scenario};
  std::vector<Scenario> variants(2, scenario);
  variants[0].mode = RunMode::kSim;
  if (variants[0].topology.coordination == CoordinationKind::kRedis) {
    variants[0].topology.coordination = CoordinationKind::kSimRedis;
  }
  variants[1].mode = RunMode::kReal;
  return variants;
}

}  // namespace kvchaos::harness
