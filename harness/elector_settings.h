// The elector and coordination-client settings a run gives its nodes, the same in both modes (sim:
// SimConfig; real: each node's config and coordination URI): the scenario's `topology` values, or
// the production defaults — what a node runs when its config leaves them out (the coordination
// URI's timeout_ms and retry_count defaults, the elector's default margin, no cool-down).
#pragma once

#include <cstdint>
#include <string>

#include "harness/scenario.h"

namespace kvchaos::harness {

struct ElectorSettings {
  int64_t coordination_timeout_ms = 0;
  int coordination_retries = 0;
  int64_t safety_margin_ms = -1;  // -1: the elector's default (DefaultSafetyMarginMs)
  int64_t forbid_campaign_ms = 0;
};

ElectorSettings ElectorSettingsOf(const Topology& topology);

// The query of a node's Redis coordination URI that carries the client settings:
// "/?timeout_ms=T&retry_count=R".
std::string CoordinationUriQuery(const ElectorSettings& settings);

}  // namespace kvchaos::harness
