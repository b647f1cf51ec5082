// The YAML document walk; see yaml_document_check.h.
#include "core/common/yaml_document_check.h"

#include <algorithm>
#include <map>

#include "core/common/utf8.h"

namespace kvchaos {
namespace {

int LineOf(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }

std::string Join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

struct Pending {
  YAML::Node node;
  std::string path;
  size_t depth;
};

}  // namespace

std::vector<YamlProblem> CheckYamlDocument(const YAML::Node& root, const YamlLimits& limits) {
  std::vector<YamlProblem> problems;
  auto problem = [&problems](int line, const std::string& path, std::string text) {
    problems.push_back(YamlProblem{line, EscapeInvalidUtf8(path), std::move(text)});
  };
  // Depth first with an explicit stack (children pushed in reverse), so a deep document cannot
  // overflow the call stack.
  std::vector<Pending> stack = {{root, "", 0}};
  size_t nodes = 0;
  while (!stack.empty()) {
    Pending item = std::move(stack.back());
    stack.pop_back();
    const YAML::Node& node = item.node;
    if (++nodes > limits.max_nodes) {
      problem(LineOf(node), "",
              "the document expands to more than " + std::to_string(limits.max_nodes) +
                  " nodes (each use of an alias repeats its anchored node); refused");
      break;
    }
    if (item.depth > limits.max_depth) {
      problem(LineOf(node), item.path, "nested deeper than " + std::to_string(limits.max_depth) + " levels");
      continue;
    }
    const std::string& tag = node.Tag();
    if (std::string bad = Utf8Problem(tag); !bad.empty()) problem(LineOf(node), item.path, "the tag " + bad);
    switch (node.Type()) {
      case YAML::NodeType::Scalar:
        if (std::string bad = Utf8Problem(node.Scalar()); !bad.empty()) {
          problem(LineOf(node), item.path, "the value " + bad);
        }
        break;
      case YAML::NodeType::Sequence: {
        std::vector<Pending> children;
        size_t i = 0;
        for (const YAML::Node& child : node) {
          children.push_back({child, item.path + "[" + std::to_string(i++) + "]", item.depth + 1});
        }
        stack.insert(stack.end(), std::make_move_iterator(children.rbegin()), std::make_move_iterator(children.rend()));
        break;
      }
      case YAML::NodeType::Map: {
        std::map<std::string, int> first_line;  // key → line it was first given on
        std::vector<Pending> children;
        for (auto it = node.begin(); it != node.end(); ++it) {
          if (!it->first.IsScalar()) {
            problem(LineOf(it->first), item.path, "a key must be a plain string, not a list or mapping");
            continue;
          }
          const std::string& key = it->first.Scalar();
          const std::string path = Join(item.path, key);
          if (std::string bad = Utf8Problem(key); !bad.empty()) {
            problem(LineOf(it->first), path, "the key " + bad);
            continue;
          }
          if (auto [seen, fresh] = first_line.emplace(key, LineOf(it->first)); !fresh) {
            problem(LineOf(it->first), path, "duplicate key (first given on line " + std::to_string(seen->second) + ")");
            continue;
          }
          children.push_back({it->second, path, item.depth + 1});
        }
        stack.insert(stack.end(), std::make_move_iterator(children.rbegin()), std::make_move_iterator(children.rend()));
        break;
      }
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        break;
    }
  }
  std::stable_sort(problems.begin(), problems.end(),
                   [](const YamlProblem& a, const YamlProblem& b) { return a.line < b.line; });
  return problems;
}

}  // namespace kvchaos
