#include "core/service/node_metrics.h"

#include <chrono>
#include <string>

#include "core/election/leader_elector.h"

namespace kvchaos::service {

void WriteNodeMetrics(MetaNode& node, MetricsRegistry& out) {
  const election::LeadershipSnapshot snap = node.elector().Snapshot();
  const MetricLabels self{{"node_id", node.node_id()}};
  out.Set("kvchaos_node_is_leader", "1 while this node leads (holds a lease it may serve under), else 0.", self,
          snap.is_leader ? 1 : 0);
  for (const election::ElectorState state :
       {election::ElectorState::kFollower, election::ElectorState::kPromoting, election::ElectorState::kLeader,
        election::ElectorState::kDemoting}) {
    out.Set("kvchaos_node_elector_state", "1 for the elector's current state, 0 for the others.",
            {{"node_id", node.node_id()}, {"state", std::string(election::ElectorStateName(state))}},
            snap.state == state ? 1 : 0);
  }
  out.Set("kvchaos_node_fencing_token", "The fencing token of this node's current term (its term number); 0 when in none.",
          self, static_cast<double>(snap.token));
  const double lease_left_s =
      snap.lease_deadline ? std::chrono::duration<double>(*snap.lease_deadline - snap.taken_at).count() : 0;
  out.Set("kvchaos_node_lease_remaining_seconds", "Time left on this node's lease; 0 when it holds none.", self,
          lease_left_s > 0 ? lease_left_s : 0);
  out.Add("kvchaos_node_leader_terms_total", "Terms this node became leader in (each one a failover to it or a first election).",
          self, static_cast<double>(node.terms_led()));
  node.coordination_metrics().CopyInto(out);
  const std::optional<MonoTime> answered = node.coordination_last_answer();
  if (answered) {
    out.Set("kvchaos_node_coordination_silence_seconds",
            "Time since the coordination backend last answered a call (any answer; not unreachable or timed out).", self,
            std::chrono::duration<double>(node.runtime().Now() - *answered).count());
  }
  const nlohmann::json health = node.Health();
  out.Set("kvchaos_node_healthy", "1 when the node's CheckHealth passes, else 0.", self,
          health.value("healthy", false) ? 1 : 0);
}

}  // namespace kvchaos::service
