// Loading a scenario file: YAML syntax → JSON Schema (scenarios/schema.json, valijson) → the typed
// model (durations and sizes through core/common/units.h) → the checks a schema cannot express
// (scenario_checks.h). Every problem is reported as `file:line: key: problem`, all of them at once,
// in one InvalidConfig status; nothing is returned unless the whole file is valid.
//
//   Result<Scenario> s = LoadScenarioFile("scenarios/ci/leader-crash.yaml");
//   if (!s.ok()) { std::cerr << s.status().message(); return 2; }
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "harness/scenario.h"

namespace kvchaos::harness {

Result<Scenario> LoadScenarioFile(const std::string& path);
// Parses `text`; `file` names it in messages and becomes Scenario::file.
Result<Scenario> ParseScenario(std::string_view text, const std::string& file);

// The scenario files (*.yaml, *.yml) under `path` — itself when it is a file — sorted by path so
// every machine sees the same order. Errors name a path that does not exist.
Result<std::vector<std::string>> FindScenarioFiles(const std::string& path);

}  // namespace kvchaos::harness
