// Validation of a scenario document against scenarios/schema.json (JSON Schema draft 7) with
// valijson. valijson's own messages ("Value type not permitted by 'type' constraint") name neither
// the line nor what was expected, so each error is mapped back to its YAML line and rewritten from
// the failing subschema (its enum, range or description): `faults[1].node: expected a node index
// (0-based), or leader, follower or all ..., got string "boss"`.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/source_problems.h"
#include "harness/yaml_json.h"

namespace kvchaos::harness {

// The embedded schema, parsed.
const nlohmann::json& ScenarioSchemaJson();

// Validates `doc`, adding one problem per distinct violation. True when valid.
bool ValidateAgainstSchema(const YamlJson& doc, SourceProblems* problems);

}  // namespace kvchaos::harness
