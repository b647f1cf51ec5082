// YAML → JSON with a line for every value, so a JSON Schema validator can check a YAML file and
// its errors still point at file:line.
//
// Plain scalars get their YAML 1.2 core-schema type (42 → integer, 1.5 → number, true → boolean,
// ~ → null, anything else → string); quoted scalars are always strings. Typing strictly here is
// what lets the schema reject `nodes: "3"` or `seed: abc`. Custom tags and non-finite numbers are
// problems, not silently resolved; so is everything core/common/yaml_document_check.h finds
// (aliases expanding past a node budget, depth, duplicate and non-scalar keys, invalid UTF-8),
// checked before anything is converted.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/source_problems.h"

namespace kvchaos::harness {

// A key path inside a document: object keys and array indexes, rendered "faults[2].node".
class KeyPath {
 public:
  KeyPath() = default;
  KeyPath Key(const std::string& key) const;
  KeyPath Index(size_t index) const;
  std::string ToString() const { return text_; }
  bool empty() const { return text_.empty(); }
  friend bool operator<(const KeyPath& a, const KeyPath& b) { return a.text_ < b.text_; }

 private:
  std::string text_;
};

struct SourceLines {
  int key_line = 0;    // line of the key naming this value (the value's own line at the root/items)
  int value_line = 0;  // line where the value starts
};

struct YamlJson {
  nlohmann::json value;
  std::map<std::string, SourceLines> lines;  // by KeyPath::ToString()

  // The line of `path`'s key, else of its nearest ancestor present in the document.
  int KeyLine(const std::string& path) const;
  int ValueLine(const std::string& path) const;
};

// Converts `root`; problems are added to `problems` (the result is then only partly meaningful).
YamlJson YamlToJson(const YAML::Node& root, SourceProblems* problems);

}  // namespace kvchaos::harness
