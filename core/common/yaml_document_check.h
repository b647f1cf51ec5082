// Checks a parsed YAML document before any reader walks it, for the problems yaml-cpp lets
// through and every reader would otherwise have to catch on its own:
//   - expansion: an alias stands for its anchored node again each time it is used, so a few
//     lines of anchors can stand for billions of nodes ("billion laughs"); the walk counts nodes
//     as expanded and stops at a budget, so neither it nor a reader after it can blow up;
//   - depth past a bound (a mistake or an attack; also ends alias cycles such as &a [*a]);
//   - duplicate keys (yaml-cpp keeps both; a lookup would silently see only the first);
//   - keys that are lists or mappings;
//   - keys, values and tags that are not valid UTF-8 (they would abort JSON output later).
// Both the config reader (core/common/config_reader.h) and the scenario reader use it, so every
// YAML input of kvchaos (store, node, rules, scenario files, control rules) gets the same checks.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <vector>

namespace kvchaos {

struct YamlProblem {
  int line = 0;      // 1-based
  std::string path;  // "faults[2].node"; empty for the document itself
  std::string problem;
};

struct YamlLimits {
  // Hand-written configs and scenarios have hundreds of nodes; a converted JSON node costs ~100
  // bytes, so the budget bounds a reader's memory to a few MiB.
  size_t max_nodes = 100000;
  size_t max_depth = 64;
};

// Every problem, ordered by line; empty when the document is fine. Past the node budget the walk
// stops with one problem naming the line where the budget ran out.
std::vector<YamlProblem> CheckYamlDocument(const YAML::Node& root, const YamlLimits& limits = {});

}  // namespace kvchaos
