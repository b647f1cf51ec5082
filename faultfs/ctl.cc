// The ctl client; see ctl.h.
#include "faultfs/ctl.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/common/json_text.h"
#include "faultfs/control_server.h"
#include "faultfs/rule_parser.h"
#include "faultfs/stats_metrics.h"

namespace kvchaos::faultfs {
namespace {

// YAML → JSON, keeping numbers and booleans typed so the server reads them as the file meant.
nlohmann::json YamlToJson(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = node.begin(); it != node.end(); ++it) out[it->first.Scalar()] = YamlToJson(it->second);
    return out;
  }
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : node) out.push_back(YamlToJson(item));
    return out;
  }
  if (!node.IsScalar()) return nullptr;
  const std::string& s = node.Scalar();
  if (node.Tag() != "!") {  // unquoted: may be a number or a boolean
    if (s == "true" || s == "false") return s == "true";
    try {
      size_t used = 0;
      const long long v = std::stoll(s, &used);
      if (used == s.size()) return v;
      const double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
  }
  return s;
}

constexpr const char* kUsage =
    "usage: faultfs ctl SOCKET list|stats|metrics|enable|disable|clear|crash\n"
    "       faultfs ctl SOCKET release [RULE_ID] | remove RULE_ID\n"
    "       faultfs ctl SOCKET add RULE_JSON|RULES_YAML_FILE\n"
    "       faultfs ctl SOCKET '{\"cmd\":...}'\n"
    "       faultfs ctl [SOCKET] help";

constexpr const char* kHelp =
    "faultfs ctl SOCKET COMMAND [ARG]: change the rules of a mounted faultfs through its --control socket.\n"
    "\n"
    "  list               the installed rules (id, path glob, ops, action, enabled)\n"
    "  stats              hits per rule and calls per operation since the mount\n"
    "  metrics            the same counts in the Prometheus text format\n"
    "  add RULE           install rules: one as JSON ('{\"id\":\"e\",\"path\":\"*.blk\",\"action\":\"errno\",\n"
    "                     \"errno\":\"EIO\"}'), or every rule of a rules YAML file (checked here first:\n"
    "                     file:line: key: problem); the keys are those of --rules (faultfs/README.md)\n"
    "  remove RULE_ID     remove one rule\n"
    "  clear              remove every rule\n"
    "  enable | disable   switch every rule on / off (they stay installed)\n"
    "  release [RULE_ID]  let calls held by hang rules go on (all of them, or one rule's)\n"
    "  crash              drop the writes tracked files have not synced (a power loss of the storage)\n"
    "  '{\"cmd\":...}'      a raw request line of the control protocol (faultfs/control_commands.h)\n"
    "  help               this text\n"
    "\n"
    "Prints the reply line (JSON). Exit 0 when it says ok, 1 when it carries an error, 2 on bad usage or\n"
    "when the socket cannot be reached.\n";

bool IsHelp(const std::string& arg) { return arg == "help" || arg == "-h" || arg == "--help"; }

}  // namespace

Result<std::string> BuildCtlRequest(const std::vector<std::string>& args) {
  if (args.empty()) return Status::InvalidArgument(kUsage);
  const std::string& cmd = args[0];
  if (!cmd.empty() && cmd.front() == '{') {
    if (args.size() != 1) return Status::InvalidArgument(kUsage);
    return cmd;
  }
  if (cmd == "metrics") {  // the stats, rendered here (RunCtl)
    if (args.size() != 1) return Status::InvalidArgument("'metrics' takes no argument\n" + std::string(kUsage));
    return DumpJson({{"cmd", "stats"}});
  }
  if (cmd == "list" || cmd == "stats" || cmd == "enable" || cmd == "disable" || cmd == "clear" || cmd == "crash") {
    if (args.size() != 1) return Status::InvalidArgument("'" + cmd + "' takes no argument\n" + kUsage);
    return DumpJson({{"cmd", cmd}});
  }
  if (cmd == "release") {
    if (args.size() > 2) return Status::InvalidArgument(kUsage);
    nlohmann::json request = {{"cmd", "release"}};
    if (args.size() == 2) request["id"] = args[1];
    return DumpJson(request);
  }
  if (cmd == "remove") {
    if (args.size() != 2) return Status::InvalidArgument("'remove' needs a rule id\n" + std::string(kUsage));
    return DumpJson({{"cmd", "remove"}, {"id", args[1]}});
  }
  if (cmd == "add") {
    if (args.size() != 2) return Status::InvalidArgument("'add' needs a rule\n" + std::string(kUsage));
    const std::string& arg = args[1];
    if (!arg.empty() && arg.front() == '{') {
      Result<nlohmann::json> rule = ParseJsonStrict(arg, "rule");
      if (!rule.ok()) return rule.status();
      return DumpJson({{"cmd", "add"}, {"rule", *rule}});
    }
    Result<RulesFile> file = LoadRulesFile(arg);  // reports file:line: key: problem
    if (!file.ok()) return file.status();
    YAML::Node root = YAML::LoadFile(arg);
    return DumpJson({{"cmd", "add"}, {"rules", YamlToJson(root["rules"])}});
  }
  return Status::InvalidArgument("unknown command '" + cmd + "'\n" + kUsage);
}

int RunCtl(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << kUsage << "\n";
    return 2;
  }
  // `faultfs ctl help` and `faultfs ctl SOCKET help` need no running faultfs.
  if ((args.size() == 1 && IsHelp(args[0])) || (args.size() == 2 && IsHelp(args[1]))) {
    std::cout << kHelp;
    return 0;
  }
  Result<std::string> request = BuildCtlRequest({args.begin() + 1, args.end()});
  if (!request.ok()) {
    std::cerr << "faultfs ctl: " << request.status().message() << "\n";
    return 2;
  }
  Result<std::string> reply = ControlRequest(args[0], *request);
  if (!reply.ok()) {
    std::cerr << "faultfs ctl: " << reply.status().ToString() << "\n";
    return 2;
  }
  if (args[1] == "metrics") {
    Result<nlohmann::json> stats = ParseJsonStrict(*reply, "faultfs stats reply");
    Result<std::string> text = stats.ok() ? StatsToPrometheus(*stats) : Result<std::string>(stats.status());
    if (!text.ok()) {
      std::cerr << "faultfs ctl: " << text.status().message() << "\n" << *reply << "\n";
      return 1;
    }
    std::cout << *text;
    return 0;
  }
  std::cout << *reply << "\n";
  try {
    return nlohmann::json::parse(*reply).value("ok", false) ? 0 : 1;
  } catch (const nlohmann::json::exception&) {
    return 1;
  }
}

}  // namespace kvchaos::faultfs
