// Reads faultfs rules from YAML (the --rules file) or from one JSON/YAML mapping (the control
// protocol's "add"), through core/common/config_reader.h so every problem is reported as
// `file:line: key: problem` and nothing is applied unless the whole input is valid.
//
//   seed: 42                      # optional; --seed on the command line wins
//   rules:
//     - id: flaky-blocks
//       path: "blocks/**"         # glob: * within a name, ** across '/', ? one character
//       ops: [read]               # default: every op the action applies to
//       probability: 0.1          # or every: K, or nth: N (default every: 1)
//       from: 2s                  # window, measured from when the rule was installed
//       until: 30s
//       max_hits: 5
//       action: errno             # see README.md for every action and its keys
//       errno: EIO
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/config_reader.h"
#include "core/common/status.h"
#include "faultfs/rule.h"

namespace kvchaos::faultfs {

struct RulesFile {
  std::optional<uint64_t> seed;
  std::vector<Rule> rules;
};

// Parses a rules document; `name` stands for the file in messages.
Result<RulesFile> ParseRulesText(std::string_view text, const std::string& name);
Result<RulesFile> LoadRulesFile(const std::string& path);
// One rule given as a mapping (JSON is accepted, being YAML).
Result<Rule> ParseRuleText(std::string_view text, const std::string& name);
// Reads one rule from a section; problems are recorded in the section's file.
Rule ReadRule(ConfigSection& section);

}  // namespace kvchaos::faultfs
