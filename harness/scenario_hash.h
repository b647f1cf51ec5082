// A scenario's identity for results and reports: a canonical JSON form of everything that changes
// what a run does, and a 64-bit FNV-1a hash of it (16 hex digits).
//
// Canonical means: parsed values, not text (`2s` and `2000` hash alike, comments, key order and
// formatting do not count, defaults are spelled out). The seed is left out on purpose — a result
// records scenario hash and seed side by side, and `--seed` must not change the scenario's
// identity — and so are name, description and incident notes, which document but do not act.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/scenario.h"

namespace kvchaos::harness {

nlohmann::json CanonicalScenarioJson(const Scenario& scenario);
// 16 lowercase hex digits of FNV-1a 64 over DumpJson(CanonicalScenarioJson(scenario)).
std::string ScenarioHash(const Scenario& scenario);

}  // namespace kvchaos::harness
