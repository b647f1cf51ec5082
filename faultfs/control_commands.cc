// Control protocol commands; see control_commands.h.
#include "faultfs/control_commands.h"

#include <map>
#include <set>
#include <string>

#include "core/common/json_text.h"
#include "faultfs/rule_parser.h"

namespace kvchaos::faultfs {
namespace {

nlohmann::json Error(const std::string& message) { return {{"ok", false}, {"error", message}}; }

// Rejects fields a command does not know, so that a typo is an error and not a silent default.
std::string UnknownField(const nlohmann::json& request, const std::set<std::string>& known) {
  for (const auto& [key, value] : request.items()) {
    if (key != "cmd" && known.count(key) == 0) return key;
  }
  return {};
}

}  // namespace

nlohmann::json ControlCommands::Handle(std::string_view line) {
  // Strict: invalid UTF-8 and duplicate keys are refused, and no reply quotes invalid bytes.
  Result<nlohmann::json> parsed = ParseJsonStrict(line, "request");
  if (!parsed.ok()) return Error(parsed.status().message());
  const nlohmann::json& request = *parsed;
  if (!request.is_object()) return Error("request must be a JSON object with a \"cmd\" field");
  try {
    return Dispatch(request);
  } catch (const nlohmann::json::exception& e) {
    return Error(std::string("bad request: ") + e.what());
  }
}

nlohmann::json ControlCommands::Dispatch(const nlohmann::json& request) {
  auto cmd_it = request.find("cmd");
  if (cmd_it == request.end() || !cmd_it->is_string()) return Error("field \"cmd\" (a string) is missing");
  const std::string cmd = *cmd_it;
  static const std::map<std::string, std::set<std::string>> kFields = {
      {"add", {"rule", "rules"}}, {"remove", {"id"}}, {"clear", {}},  {"list", {}},   {"stats", {}},
      {"enable", {}},             {"disable", {}},    {"release", {"id"}}, {"crash", {}}};
  auto fields = kFields.find(cmd);
  if (fields == kFields.end()) {
    return Error("unknown cmd '" + cmd + "' (known: add, remove, clear, list, stats, enable, disable, release, crash)");
  }
  if (std::string field = UnknownField(request, fields->second); !field.empty()) {
    return Error("cmd '" + cmd + "': unknown field '" + field + "'");
  }

  if (cmd == "add") {
    std::vector<nlohmann::json> items;
    if (request.contains("rule")) items.push_back(request["rule"]);
    if (request.contains("rules")) {
      if (!request["rules"].is_array()) return Error("cmd 'add': field \"rules\" must be a list");
      for (const auto& r : request["rules"]) items.push_back(r);
    }
    if (items.empty()) return Error("cmd 'add': give \"rule\" (an object) or \"rules\" (a list)");
    std::vector<Rule> rules;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_object()) return Error("cmd 'add': rule " + std::to_string(i) + " must be an object");
      // JSON is YAML, so the YAML reader checks it and names the offending key.
      Result<Rule> rule = ParseRuleText(DumpJson(items[i]), "rule[" + std::to_string(i) + "]");
      if (!rule.ok()) return Error(rule.status().message());
      rules.push_back(std::move(*rule));
    }
    Status s = engine_.Add(rules);
    if (!s.ok()) return Error(s.message());
    return {{"ok", true}, {"added", rules.size()}};
  }
  if (cmd == "remove") {
    if (!request.contains("id") || !request["id"].is_string()) return Error("cmd 'remove': field \"id\" (a string) is missing");
    Status s = engine_.Remove(request["id"]);
    if (!s.ok()) return Error(s.message());
    return {{"ok", true}};
  }
  if (cmd == "clear") {
    engine_.Clear();
    return {{"ok", true}};
  }
  if (cmd == "list") {
    nlohmann::json rules = nlohmann::json::array();
    for (const Rule& rule : engine_.List()) rules.push_back(RuleToJson(rule));
    return {{"ok", true}, {"enabled", engine_.enabled()}, {"rules", rules}};
  }
  if (cmd == "stats") {
    nlohmann::json stats = engine_.Stats();
    stats["ok"] = true;
    return stats;
  }
  if (cmd == "enable" || cmd == "disable") {
    engine_.SetEnabled(cmd == "enable");
    return {{"ok", true}, {"enabled", engine_.enabled()}};
  }
  if (cmd == "release") {
    std::string id;
    if (request.contains("id")) {
      if (!request["id"].is_string()) return Error("cmd 'release': field \"id\" must be a string");
      id = request["id"];
    }
    Result<int64_t> released = engine_.Release(id);
    if (!released.ok()) return Error(released.status().message());
    return {{"ok", true}, {"released", *released}};
  }
  // crash
  nlohmann::json result = crash_();
  result["ok"] = true;
  return result;
}

}  // namespace kvchaos::faultfs
