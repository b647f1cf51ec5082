// EvaluateHealth: the checks of CheckHealth (see node_health.h).
#include "core/service/node_health.h"

namespace kvchaos::service {
namespace {

HealthCheck AgeCheck(std::string name, std::string_view what, const HealthInputs& in, std::optional<MonoTime> last) {
  HealthCheck c;
  c.name = std::move(name);
  const Duration age = in.now - last.value_or(in.started_at);
  c.age_ms = ToMillis(age);
  c.ok = age <= in.max_age;
  const std::string limit = " (limit " + std::to_string(ToMillis(in.max_age)) + " ms)";
  if (!last) {
    c.reason = std::string(what) + " not seen since the node started " + std::to_string(*c.age_ms) + " ms ago" + limit;
  } else {
    c.reason = std::string(what) + " " + std::to_string(*c.age_ms) + " ms ago" + limit;
  }
  return c;
}

}  // namespace

HealthReport EvaluateHealth(const HealthInputs& in) {
  HealthReport r;
  r.checks.push_back(
      AgeCheck("coordination_backend", "last answer from the coordination backend", in, in.backend_answer));
  r.checks.push_back(AgeCheck("lock_thread", "lock thread (kvc_lease_lock) last began a round", in, in.lock_loop_tick));
  r.checks.push_back(
      AgeCheck("lease_check_thread", "lease-check thread (kvc_lease_check) last woke", in, in.lease_check_tick));
  if (in.holds_term) {
    HealthCheck idx{"indexer", false, ToMillis(in.indexer_ping_latency), ""};
    if (!in.indexer_ping) {
      idx.reason = "not asked";
    } else if (in.indexer_ping->ok()) {
      idx.ok = true;
      idx.reason = "meta indexer answered a ping in " + std::to_string(*idx.age_ms) + " ms";
    } else {
      idx.reason = "meta indexer ping failed: " + in.indexer_ping->ToString();
    }
    r.checks.push_back(std::move(idx));
    HealthCheck plane{"data_plane", in.data_plane_enabled, std::nullopt, ""};
    plane.reason = in.data_plane_enabled ? "leader, data plane enabled"
                                         : "leader, but the data plane is disabled: " + in.data_plane_detail;
    r.checks.push_back(std::move(plane));
  }
  HealthCheck knobs{"testing_knobs", in.testing_knobs.empty(), std::nullopt, ""};
  knobs.reason = in.testing_knobs.empty() ? "none on" : "test-only knobs on, this node is unsafe: " + in.testing_knobs;
  r.checks.push_back(std::move(knobs));
  r.healthy = true;
  for (const auto& c : r.checks) r.healthy = r.healthy && c.ok;
  return r;
}

void FillElectorHealth(const election::LeadershipSnapshot& snap, std::optional<MonoTime> backend_answer,
                       HealthInputs* in) {
  in->backend_answer = backend_answer;
  in->lock_loop_tick = snap.lock_loop_tick;
  in->lease_check_tick = snap.lease_check_tick;
  in->holds_term = snap.token != 0 && (snap.state == election::ElectorState::kPromoting ||
                                       snap.state == election::ElectorState::kLeader);
}

std::string HealthReport::Problems() const {
  std::string out;
  for (const auto& c : checks) {
    if (c.ok) continue;
    if (!out.empty()) out += "; ";
    out += c.name + ": " + c.reason;
  }
  return out;
}

nlohmann::json HealthReport::ChecksJson() const {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& c : checks) {
    nlohmann::json j = {{"name", c.name}, {"ok", c.ok}, {"reason", c.reason}};
    j["age_ms"] = c.age_ms ? nlohmann::json(*c.age_ms) : nlohmann::json(nullptr);
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace kvchaos::service
