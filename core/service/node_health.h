// NodeHealth: what CheckHealth answers, computed from a snapshot of the node's state (a pure
// function, so tests drive it with any clock). A node is healthy only if
//  - coordination_backend: the backend answered (lock, renew, holder read or heartbeat) within
//    `max_age` — a node that cannot reach it will lose or never win the lease;
//  - lock_thread / lease_check_thread: the elector's threads began a round within `max_age` — a
//    thread stuck in a backend call or deadlocked shows here, while the process still answers HTTP;
//  - on a node that holds a term (PROMOTING or LEADER): indexer — the persistent meta indexer
//    answered a cheap ping now — and data_plane — recovery finished and writes are enabled;
//  - testing_knobs: no test-only knob (kvcm.testing.*) is on.
// Each check reports ok, its age or latency in ms where it has one, and a reason in words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/election/leader_elector.h"

namespace kvchaos::service {

struct HealthInputs {
  MonoTime now{};
  Duration max_age{0};          // kvcm.service.health_max_silence_loops × loop interval
  MonoTime started_at{};        // the age of a thing that never happened counts from here
  std::optional<MonoTime> backend_answer;
  std::optional<MonoTime> lock_loop_tick;
  std::optional<MonoTime> lease_check_tick;
  bool holds_term = false;      // PROMOTING or LEADER in a live term
  // Only asked when holds_term: the ping's outcome and how long it took.
  std::optional<Status> indexer_ping;
  Duration indexer_ping_latency{0};
  bool data_plane_enabled = false;
  std::string data_plane_detail;  // why it is disabled (recovering: attempt 3 failed: …)
  std::string testing_knobs;      // "" = none on; else which
};

struct HealthCheck {
  std::string name;
  bool ok = false;
  std::optional<int64_t> age_ms;  // since the last sign of life (or the ping's latency)
  std::string reason;
};

struct HealthReport {
  bool healthy = false;
  std::vector<HealthCheck> checks;
  // "name: reason; …" of the failed checks.
  std::string Problems() const;
  nlohmann::json ChecksJson() const;
};

HealthReport EvaluateHealth(const HealthInputs& in);

// Fills the coordination and elector parts of `in` (backend answer, thread ticks, holds_term)
// from the elector's snapshot and the WatchedBackend's last answer.
void FillElectorHealth(const election::LeadershipSnapshot& snap, std::optional<MonoTime> backend_answer,
                       HealthInputs* in);

}  // namespace kvchaos::service
