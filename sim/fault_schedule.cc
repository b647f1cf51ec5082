#include "sim/fault_schedule.h"

#include <algorithm>
#include <array>
#include <cstdlib>

namespace kvchaos::sim {
namespace {

constexpr std::array<const char*, kFaultKindCount> kNames = {
    "crash", "pause", "partition", "backend-outage", "clock",       "net",
    "slow",  "backend-wipe", "backend-clock", "store-fault", "store-crash"};

int64_t Scaled(Rng& rng, int64_t base, double lo, double hi) {
  return static_cast<int64_t>(static_cast<double>(base) * rng.UniformReal(lo, hi));
}

}  // namespace

const char* FaultKindName(FaultKind kind) {
  if (kind == FaultKind::kDemote) return "demote";
  if (kind == FaultKind::kStop) return "stop";
  if (kind == FaultKind::kMetaSwap) return "meta-swap";
  if (kind == FaultKind::kCoordinationFailover) return "coordination-failover";
  return kNames[static_cast<size_t>(kind)];
}

FaultMask DefaultFaults() {
  FaultMask mask = 0;
  for (int i = 0; i < kFaultKindCount; ++i) mask |= FaultMask{1} << i;
  return mask & ~FaultBit(FaultKind::kBackendWipe) & ~FaultBit(FaultKind::kBackendClock) & ~StoreFaults();
}

FaultMask StoreFaults() { return FaultBit(FaultKind::kStoreFault) | FaultBit(FaultKind::kStoreCrash); }

Result<FaultMask> ParseFaultList(std::string_view text) {
  if (text == "none" || text.empty()) return FaultMask{0};
  if (text == "default") return DefaultFaults();
  if (text == "all") return (FaultMask{1} << kFaultKindCount) - 1;
  FaultMask mask = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    bool found = false;
    for (int i = 0; i < kFaultKindCount; ++i) {
      if (item == kNames[static_cast<size_t>(i)]) {
        mask |= FaultMask{1} << i;
        found = true;
      }
    }
    if (!found) {
      std::string valid;
      for (const char* n : kNames) valid += std::string(valid.empty() ? "" : ",") + n;
      return Status::InvalidArgument("--faults: unknown fault '" + std::string(item) + "' (valid: " + valid +
                                     ", or all, default, none)");
    }
    start = comma + 1;
  }
  return mask;
}

std::string FaultListString(FaultMask mask) {
  std::string out;
  for (int i = 0; i < kFaultKindCount; ++i) {
    if (mask & (FaultMask{1} << i)) out += std::string(out.empty() ? "" : ",") + kNames[static_cast<size_t>(i)];
  }
  return out.empty() ? "none" : out;
}

namespace {

// Coordination etcd: most outages hit one member (crash or pause), partitions cut a node from one
// member or a member from its peers (the raft leader half the time), net faults may hit one link.
void AimAtEtcdMembers(Rng& rng, int members, FaultAction& f) {
  const auto any_member = [&] { return static_cast<int>(rng.Uniform(static_cast<uint64_t>(members))); };
  switch (f.kind) {
    case FaultKind::kBackendOutage:
      if (rng.Bernoulli(0.75)) {
        f.member = any_member();
        f.variant = static_cast<int>(rng.Uniform(2));  // 0 crash, 1 pause
      }
      break;
    case FaultKind::kPartition:
      switch (rng.Uniform(3)) {
        case 0:
          break;  // the node cut from every member
        case 1:
          f.member = any_member();  // the node cut from one member
          break;
        default:
          f.peers = PartitionPeers::kEtcdPeers;
          f.member = rng.Bernoulli(0.5) ? -1 : any_member();  // -1: whoever leads raft then
          f.variant = 0;
          f.target_leader = false;
          break;
      }
      break;
    case FaultKind::kNet:
      if (rng.Bernoulli(0.5)) f.member = any_member();
      break;
    default:
      break;
  }
}

}  // namespace

std::vector<FaultAction> GenerateFaults(Rng rng, const FaultPlanOptions& o) {
  std::vector<FaultAction> out;
  std::vector<FaultKind> kinds;
  for (int i = 0; i < kFaultKindCount; ++i) {
    if (o.kinds & (FaultMask{1} << i)) kinds.push_back(static_cast<FaultKind>(i));
  }
  if (kinds.empty() || o.chaos_end_ns <= o.chaos_start_ns || o.nodes <= 0) return out;
  const int64_t lease = o.lease_ns;
  Rng etcd = rng.Split("etcd-members");
  Rng failover = rng.Split("coordination-failover");
  TrueNs t = o.chaos_start_ns + Scaled(rng, lease, 0.1, 1.0);
  while (t < o.chaos_end_ns) {
    FaultAction f;
    f.t = t;
    f.kind = kinds[static_cast<size_t>(rng.Uniform(kinds.size()))];
    f.target_leader = rng.Bernoulli(0.6);
    f.node = static_cast<int>(rng.Uniform(static_cast<uint64_t>(o.nodes)));
    switch (f.kind) {
      case FaultKind::kCrash:
        f.duration_ns = Scaled(rng, lease, 0.2, 3.0);  // down time before the restart
        break;
      case FaultKind::kPause:
        f.duration_ns = Scaled(rng, lease, 0.05, 2.5);
        break;
      case FaultKind::kPartition:
        // 0 both ways, 1 to backend, 2 from backend, 3 a degrading link: replies slow down by
        // `amount` for the first third, then the link is cut both ways (congestion, then loss).
        f.variant = static_cast<int>(rng.Uniform(4));
        f.duration_ns = Scaled(rng, lease, 0.1, 2.0);
        f.amount = rng.UniformInt(50, 1000) * 1'000'000;
        break;
      case FaultKind::kBackendOutage:
        f.variant = static_cast<int>(rng.Uniform(2));  // 0 unreachable, 1 down and restarted
        f.duration_ns = Scaled(rng, lease, 0.02, 1.5);
        break;
      case FaultKind::kBackendWipe:
        f.duration_ns = Scaled(rng, lease, 0.02, 0.5);
        break;
      case FaultKind::kClock:
        f.variant = static_cast<int>(rng.Uniform(4));  // 0 node drift, 1 backend drift, 2 wall step, 3 mono step
        if (f.variant <= 1) {
          f.amount = rng.UniformInt(-o.max_drift_ppm, o.max_drift_ppm);
        } else if (f.variant == 2) {
          f.amount = rng.UniformInt(-60'000, 60'000) * 1'000'000;
        } else {
          f.amount = rng.UniformInt(10, 2000) * 1'000'000;
        }
        break;
      case FaultKind::kBackendClock:
        f.amount = rng.UniformInt(-30'000, 30'000) * 1'000'000;
        break;
      case FaultKind::kNet:
        f.variant = static_cast<int>(rng.Uniform(6));  // (loss|dup|delay) x (to|from backend)
        f.duration_ns = Scaled(rng, lease, 0.05, 1.0);
        f.probability = rng.UniformReal(0.05, 0.5);
        f.amount = rng.UniformInt(1, 1500) * 1'000'000;
        break;
      case FaultKind::kSlow:
        f.duration_ns = Scaled(rng, lease, 0.1, 2.0);
        f.amount = rng.UniformInt(1, 300) * 1'000'000;
        break;
      case FaultKind::kStoreFault: {
        f.target_leader = false;
        f.node = static_cast<int>(rng.Uniform(static_cast<uint64_t>(std::max(1, o.store_mounts))));
        std::vector<int> variants;
        for (int v = 0; v < 5; ++v) {
          if ((o.store_fault_variants >> v) & 1) variants.push_back(v);
        }
        f.variant = variants.empty() ? 0 : variants[static_cast<size_t>(rng.Uniform(variants.size()))];
        f.duration_ns = Scaled(rng, lease, 0.5, 5.0);
        f.probability = f.variant == 0 ? rng.UniformReal(0.2, 1.0) : rng.UniformReal(0.3, 1.0);
        f.amount = rng.UniformInt(5, 200) * 1'000'000;
        break;
      }
      case FaultKind::kStoreCrash:
        f.target_leader = false;
        break;
      case FaultKind::kDemote:  // scenario-only, never drawn
      case FaultKind::kStop:
      case FaultKind::kMetaSwap:
      case FaultKind::kCoordinationFailover:
        break;
    }
    if (o.etcd_members > 0) AimAtEtcdMembers(etcd, o.etcd_members, f);
    // Every fault is over when the quiet phase starts.
    if (f.duration_ns > 0) f.duration_ns = std::min<int64_t>(f.duration_ns, o.chaos_end_ns - f.t);
    out.push_back(f);
    t += Scaled(rng, lease, 0.3, 2.0);
  }
  if (o.coordination_failover && o.chaos_end_ns - o.chaos_start_ns > 2 * lease) {
    FaultAction f;
    f.kind = FaultKind::kCoordinationFailover;
    f.t = o.chaos_start_ns + static_cast<int64_t>(failover.Uniform(static_cast<uint64_t>(o.chaos_end_ns - o.chaos_start_ns - 2 * lease)));
    if (failover.Bernoulli(0.5)) {
      f.duration_ns = Scaled(failover, lease, 0.1, 1.5);  // replication cut that long before the primary dies
      f.variant = 1;
    }
    out.push_back(f);
    std::stable_sort(out.begin(), out.end(), [](const FaultAction& a, const FaultAction& b) { return a.t < b.t; });
  }
  if (o.kinds & FaultBit(FaultKind::kClock)) {
    // The backend's time daemon slews its clock now and then (chrony slews at up to 83333 ppm):
    // at most one correction of <= 30 ms in flight, spaced more than a lease apart, so the
    // default margin still covers them; Redis expiries move with that clock.
    Rng slews = rng.Split("slews");
    for (TrueNs s = o.chaos_start_ns + Scaled(slews, lease, 0.0, 1.0); s < o.chaos_end_ns;) {
      FaultAction f;
      f.t = s;
      f.kind = FaultKind::kClock;
      f.variant = 4;
      f.node = 0;
      const int64_t correction_ns = slews.UniformInt(-30, 30) * 1'000'000;
      f.amount = slews.UniformInt(20'000, 83'333) * (correction_ns < 0 ? -1 : 1);  // ppm
      f.duration_ns = std::min<int64_t>(std::abs(correction_ns) * 1'000'000 / std::abs(f.amount), o.chaos_end_ns - s);
      if (correction_ns != 0) out.push_back(f);
      s += f.duration_ns + lease + Scaled(slews, lease, 0.05, 0.5);
    }
    std::stable_sort(out.begin(), out.end(), [](const FaultAction& a, const FaultAction& b) { return a.t < b.t; });
  }
  return out;
}

}  // namespace kvchaos::sim
