// Elector and coordination-client settings of a run (see elector_settings.h).
#include "harness/elector_settings.h"

#include "core/election/coordination_uri.h"
#include "core/election/leader_elector.h"

namespace kvchaos::harness {

ElectorSettings ElectorSettingsOf(const Topology& t) {
  const election::RedisEndpoint client_defaults;
  const election::LeaderElectorOptions elector_defaults;
  ElectorSettings s;
  s.coordination_timeout_ms = t.coordination_timeout ? ToMillis(*t.coordination_timeout) : client_defaults.timeout_ms;
  s.coordination_retries = t.coordination_retries.value_or(client_defaults.retry_count);
  s.safety_margin_ms = t.safety_margin ? ToMillis(*t.safety_margin) : elector_defaults.safety_margin_ms;
  s.forbid_campaign_ms = t.forbid_campaign ? ToMillis(*t.forbid_campaign) : elector_defaults.forbid_campaign_time_ms;
  return s;
}

std::string CoordinationUriQuery(const ElectorSettings& s) {
  return "/?timeout_ms=" + std::to_string(s.coordination_timeout_ms) +
         "&retry_count=" + std::to_string(s.coordination_retries);
}

}  // namespace kvchaos::harness
