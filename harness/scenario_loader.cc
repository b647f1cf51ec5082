// Scenario loading pipeline (see scenario_loader.h). The schema has already vouched for types and
// keys when the model is built, so building only parses units and resolves names.
#include "harness/scenario_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/common/json_text.h"
#include "core/common/units.h"
#include "harness/scenario_checks.h"
#include "harness/scenario_schema.h"
#include "harness/yaml_json.h"

namespace kvchaos::harness {
namespace {

using nlohmann::json;

// Largest file we read as a scenario: they are hand-written; anything bigger is a wrong path.
constexpr std::uintmax_t kMaxScenarioBytes = 4 << 20;

const std::map<std::string, int>& ErrnoNames() {
  static const std::map<std::string, int> names{
      {"EIO", EIO},       {"ENOSPC", ENOSPC}, {"EROFS", EROFS},         {"EACCES", EACCES},   {"ENOENT", ENOENT},
      {"EAGAIN", EAGAIN}, {"EINTR", EINTR},   {"ETIMEDOUT", ETIMEDOUT}, {"EDQUOT", EDQUOT}, {"ENOTCONN", ENOTCONN}};
  return names;
}

class ModelBuilder {
 public:
  ModelBuilder(const YamlJson& doc, SourceProblems* problems) : doc_(doc), problems_(problems) {}

  Scenario Build(const std::string& file) {
    const json& root = doc_.value;
    Scenario s;
    s.file = file;
    s.name = root["name"].get<std::string>();
    s.description = root.value("description", "");
    // A file for both modes is built as its real copy (coordination defaults to redis);
    // ModeVariants derives the sim copy.
    s.both_modes = root["mode"] == "both";
    s.mode = root["mode"] == "sim" ? RunMode::kSim : RunMode::kReal;
    if (root.contains("seed")) {
      // The schema cannot bound a uint64 (valijson compares limits as signed), so the sign is checked here.
      const json& seed = root["seed"];
      if (seed.is_number_integer() && !seed.is_number_unsigned() && seed.get<int64_t>() < 0) {
        Problem("seed", "expected a non-negative 64-bit integer (0 to 18446744073709551615), got " + DumpJson(seed));
      } else {
        s.seed = seed.get<uint64_t>();
      }
    }
    s.duration = DurationAt(root["duration"], "duration");
    if (s.duration.count() <= 0) Problem("duration", "must be greater than 0");
    if (root.contains("incident")) s.incident = BuildIncident(root["incident"]);
    s.topology = BuildTopology(root["topology"], s.mode);
    if (root.contains("workload")) s.workload = BuildWorkload(root["workload"]);
    if (root.contains("faults")) {
      const json& faults = root["faults"];
      for (size_t i = 0; i < faults.size(); ++i) s.faults.push_back(BuildFault(faults[i], i));
    }
    if (root.contains("expect")) s.expect = BuildExpectations(root["expect"]);
    return s;
  }

 private:
  void Problem(const std::string& path, const std::string& text) {
    problems_->Add(doc_.ValueLine(path), path, text);
  }

  Duration DurationAt(const json& value, const std::string& path) {
    if (value.is_number()) {
      const double ms = value.get<double>();
      if (ms > static_cast<double>(ToMillis(kMaxDuration))) {
        Problem(path, "duration is too large (at most 100 years)");
        return {};
      }
      return Duration(static_cast<int64_t>(std::llround(ms * 1e6)));
    }
    Result<Duration> d = ParseDuration(value.get<std::string>());
    if (!d.ok()) {
      Problem(path, d.status().message());
      return {};
    }
    return *d;
  }

  // "256KiB/s": bytes per second; the unit is spelled out so nobody reads it as a total.
  uint64_t BandwidthAt(const std::string& text, const std::string& path) {
    constexpr std::string_view kPerSecond = "/s";
    if (!text.ends_with(kPerSecond)) {
      Problem(path, "'" + text + "' is not a rate: write bytes per second, e.g. 256KiB/s");
      return 0;
    }
    Result<uint64_t> bytes = ParseByteSize(std::string_view(text).substr(0, text.size() - kPerSecond.size()));
    if (!bytes.ok() || *bytes == 0) {
      Problem(path, bytes.ok() ? "must be greater than 0/s" : bytes.status().message() + " (a rate, e.g. 256KiB/s)");
      return 0;
    }
    return *bytes;
  }

  Duration SignedDurationAt(const json& value, const std::string& path) {
    std::string text = value.get<std::string>();
    const bool negative = text[0] == '-';
    Result<Duration> d = ParseDuration(text.substr(1));
    if (!d.ok()) {
      Problem(path, d.status().message());
      return {};
    }
    return negative ? -*d : *d;
  }

  Incident BuildIncident(const json& j) {
    Incident incident;
    incident.summary = j["summary"].get<std::string>();
    incident.symptom = j["symptom"].get<std::string>();
    incident.cause = j["cause"].get<std::string>();
    incident.guards = j["guards"].get<std::string>();
    if (j.contains("references")) incident.references = j["references"].get<std::vector<std::string>>();
    return incident;
  }

  Topology BuildTopology(const json& j, RunMode mode) {
    Topology t;
    t.nodes = j["nodes"].get<int>();
    t.lease = Millis(j["lease_ms"].get<int64_t>());
    t.loop_interval = Millis(j["loop_interval_ms"].get<int64_t>());
    t.coordination = mode == RunMode::kSim ? CoordinationKind::kSimRedis : CoordinationKind::kRedis;
    if (j.contains("coordination")) {
      const std::string c = j["coordination"].get<std::string>();
      t.coordination = c == "memory"  ? CoordinationKind::kMemory
                       : c == "file"  ? CoordinationKind::kFile
                       : c == "redis" ? CoordinationKind::kRedis
                       : c == "etcd"  ? CoordinationKind::kEtcd
                       : c == "redis-sentinel" ? CoordinationKind::kRedisSentinel
                                      : CoordinationKind::kSimRedis;
    }
    if (j.contains("backends")) {
      for (const json& b : j["backends"]) t.backends.push_back({b["name"].get<std::string>(), b.value("faultfs", false)});
    }
    t.durable_commit = j.value("durable_commit", false);
    t.inline_header = j.value("inline_header", false);
    if (j.contains("coordination_timeout_ms")) {
      t.coordination_timeout = Millis(j["coordination_timeout_ms"].get<int64_t>());
    }
    if (j.contains("coordination_retries")) t.coordination_retries = j["coordination_retries"].get<int>();
    if (j.contains("safety_margin_ms")) t.safety_margin = Millis(j["safety_margin_ms"].get<int64_t>());
    if (j.contains("forbid_campaign_ms")) t.forbid_campaign = Millis(j["forbid_campaign_ms"].get<int64_t>());
    return t;
  }

  Workload BuildWorkload(const json& j) {
    Workload w;
    w.save_rate_per_s = j.value("save_rate_per_s", 0.0);
    w.load_rate_per_s = j.value("load_rate_per_s", 0.0);
    if (j.contains("block_size")) {
      const json& b = j["block_size"];
      Result<uint64_t> size = ParseByteSize(b.is_string() ? b.get<std::string>() : DumpJson(b));
      if (size.ok()) {
        w.block_size_bytes = *size;
      } else {
        Problem("workload.block_size", size.status().message());
      }
    }
    w.key_space = j.value("key_space", w.key_space);
    w.clients = j.value("clients", w.clients);
    return w;
  }

  NodeRef NodeRefAt(const json& j) {
    if (j.is_number_integer()) return NodeRef::Index(j.get<int>());
    const std::string name = j.get<std::string>();
    if (name == "leader") return NodeRef::Of(NodeRef::Kind::kLeader);
    if (name == "follower") return NodeRef::Of(NodeRef::Kind::kFollower);
    if (name == "all") return NodeRef::Of(NodeRef::Kind::kAll);
    return NodeRef::Of(NodeRef::Kind::kCoordination);
  }

  FaultEvent BuildFault(const json& j, size_t i) {
    const std::string base = "faults[" + std::to_string(i) + "]";
    FaultEvent f;
    f.line = doc_.ValueLine(base);
    FaultActionFromName(j["action"].get<std::string>(), &f.action);
    f.fault_class = j.value("class", std::string(FaultActionName(f.action)));
    f.at = DurationAt(j["at"], base + ".at");
    if (j.contains("every")) f.every = DurationAt(j["every"], base + ".every");
    if (j.contains("for")) f.length = DurationAt(j["for"], base + ".for");
    if (j.contains("until")) f.until = DurationAt(j["until"], base + ".until");
    if (j.contains("node")) f.node = NodeRefAt(j["node"]);
    if (j.contains("from")) {
      const std::string from = j["from"].get<std::string>();
      f.partition_from = from == "nodes" ? PartitionFrom::kNodes
                         : from == "all" ? PartitionFrom::kAll
                         : from == "peers" ? PartitionFrom::kPeers
                                           : PartitionFrom::kCoordination;
      if (f.partition_from == PartitionFrom::kPeers && j.contains("node")) {
        Problem(base + ".node", "from: peers cuts an etcd member (`member`) from the other members: no node is "
                                "involved, leave node out");
      }
    }
    if (j.contains("direction")) {
      const std::string d = j["direction"].get<std::string>();
      f.partition_direction = d == "inbound"    ? PartitionDirection::kInbound
                              : d == "outbound" ? PartitionDirection::kOutbound
                                                : PartitionDirection::kBoth;
    }
    f.partition_reset = j.value("reset", false);
    f.persistence = j.value("persistence", true);
    f.coordination_member = j.value("member", -1);
    if (j.contains("how")) f.member_pause = j["how"].get<std::string>() == "pause";
    f.net_loss = j.value("loss", 0.0);
    f.net_duplication = j.value("duplication", 0.0);
    if (j.contains("delay")) f.net_delay = DurationAt(j["delay"], base + ".delay");
    if (j.contains("jitter")) f.net_jitter = DurationAt(j["jitter"], base + ".jitter");
    if (j.contains("bandwidth")) f.net_bandwidth = BandwidthAt(j["bandwidth"].get<std::string>(), base + ".bandwidth");
    if (j.contains("wakeup_delay")) f.slow_wakeup_delay = DurationAt(j["wakeup_delay"], base + ".wakeup_delay");
    f.drift_ppm = j.value("ppm", 0.0);
    if (j.contains("by")) f.jump = SignedDurationAt(j["by"], base + ".by");
    if (f.action == FaultAction::kStoreCrash) f.backend = j["backend"].get<std::string>();
    if (f.action == FaultAction::kStoreFault) {
      f.backend = j["backend"].get<std::string>();
      StoreFaultRule& r = f.rule;
      if (j.contains("ops")) r.ops = j["ops"].get<std::vector<std::string>>();
      r.probability = j.value("probability", 1.0);
      if (j.contains("errno")) {
        r.errno_name = j["errno"].get<std::string>();
        r.errno_value = ErrnoNames().at(r.errno_name);  // the schema's enum lists exactly these names
      }
      if (j.contains("latency")) r.latency = DurationAt(j["latency"], base + ".latency");
      r.bit_flips = j.value("bit_flips", 0);
      r.hang = j.value("hang", false);
      r.misdirected_read = j.value("misdirected_read", false);
      r.source = j.value("source", std::string());
      if (r.misdirected_read && r.ops.empty()) r.ops = {"read"};
      if (r.bit_flips > 0 && r.ops.empty()) r.ops = {"read"};
    }
    return f;
  }

  static void BuildBounds(const json& j, FailoverBounds& b) {
    const auto number = [&j](const char* key, std::optional<int64_t>& out) {
      if (j.contains(key)) out = j[key].get<int64_t>();
    };
    const auto range = [&j](const char* key, std::optional<int64_t>& min, std::optional<int64_t>& max) {
      if (!j.contains(key)) return;
      if (j[key].contains("min")) min = j[key]["min"].get<int64_t>();
      if (j[key].contains("max")) max = j[key]["max"].get<int64_t>();
    };
    number("failover_p99_ms", b.failover_p99_ms);
    number("failover_min_ms", b.failover_min_ms);
    range("failovers", b.failovers_min, b.failovers_max);
    range("reelections", b.reelections_min, b.reelections_max);
    number("unavailable_p99_ms", b.unavailable_p99_ms);
    number("unavailable_max_ms", b.unavailable_max_ms);
  }

  Expectations BuildExpectations(const json& j) {
    Expectations e;
    e.no_stale_writes = j.value("no_stale_writes", e.no_stale_writes);
    e.no_corrupt_reads = j.value("no_corrupt_reads", e.no_corrupt_reads);
    e.acked_blocks_readable = j.value("acked_blocks_readable", e.acked_blocks_readable);
    e.no_dual_acting = j.value("no_dual_acting", e.no_dual_acting);
    e.no_unnecessary_failover = j.value("no_unnecessary_failover", e.no_unnecessary_failover);
    e.leader_stops_by_lease_end = j.value("leader_stops_by_lease_end", e.leader_stops_by_lease_end);
    e.linearizable = j.value("linearizable", e.linearizable);
    e.no_lost_writes = j.value("no_lost_writes", e.no_lost_writes);
    e.monotonic_reads = j.value("monotonic_reads", e.monotonic_reads);
    e.read_your_writes = j.value("read_your_writes", e.read_your_writes);
    BuildBounds(j, e);
    if (j.contains("classes")) {
      for (const auto& [name, bounds] : j["classes"].items()) BuildBounds(bounds, e.classes[name]);
    }
    if (j.contains("max_errors")) {
      for (const auto& [code, n] : j["max_errors"].items()) e.max_errors[code] = n.get<int64_t>();
    }
    if (j.contains("leader_within_ms")) e.leader_within_ms = j["leader_within_ms"].get<int64_t>();
    e.min_ops = j.value("min_ops", e.min_ops);
    e.min_misrouted_reads = j.value("min_misrouted_reads", e.min_misrouted_reads);
    return e;
  }

  const YamlJson& doc_;
  SourceProblems* problems_;
};

}  // namespace

Result<Scenario> ParseScenario(std::string_view text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidConfig(file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                                 ": YAML syntax: " + e.msg);
  }
  SourceProblems problems(file);
  if (!root.IsMap()) {
    problems.Add(root.Mark().line + 1, "",
                 root.IsNull() ? "the file is empty: a scenario is a mapping with name, mode, duration, topology"
                               : "a scenario must be a mapping of keys (name, mode, duration, topology, …)");
    return problems.ToStatus();
  }
  YamlJson doc = YamlToJson(root, &problems);
  if (!problems.empty()) return problems.ToStatus();
  if (!ValidateAgainstSchema(doc, &problems)) return problems.ToStatus();

  Scenario scenario = ModelBuilder(doc, &problems).Build(file);
  if (!problems.empty()) return problems.ToStatus();
  const auto line_of = [&doc](const std::string& path) { return doc.KeyLine(path); };
  if (!scenario.both_modes) {
    CheckScenario(scenario, line_of, &problems);
  } else {
    // Each copy is checked as its mode runs it; a problem only one mode has says which.
    const std::vector<Scenario> variants = ModeVariants(scenario);
    std::vector<SourceProblems> found(variants.size(), SourceProblems(file));
    for (size_t v = 0; v < variants.size(); ++v) CheckScenario(variants[v], line_of, &found[v]);
    for (size_t v = 0; v < variants.size(); ++v) {
      const std::vector<SourceProblem>& other = found[1 - v].problems();
      for (const SourceProblem& p : found[v].problems()) {
        const bool shared = std::find(other.begin(), other.end(), p) != other.end();
        if (shared && v == 1) continue;  // reported once, with the sim copy's
        problems.Add(p.line, p.path,
                     shared ? p.problem : "in mode " + std::string(RunModeName(variants[v].mode)) + ": " + p.problem);
      }
    }
  }
  if (!problems.empty()) return problems.ToStatus();
  return scenario;
}

Result<Scenario> LoadScenarioFile(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Status::InvalidConfig(path + ": cannot read scenario: " + ec.message());
  if (size > kMaxScenarioBytes) {
    return Status::InvalidConfig(path + ": " + FormatBytes(size) + " is too large for a scenario file (limit " +
                                 FormatBytes(kMaxScenarioBytes) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidConfig(path + ": cannot open scenario: " + ErrnoText(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseScenario(text.str(), path);
}

Result<std::vector<std::string>> FindScenarioFiles(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return Status::NotFound(path + ": no such file or directory");
  if (!fs::is_directory(st)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path& p = it->path();
    if (it->is_regular_file() && (p.extension() == ".yaml" || p.extension() == ".yml")) files.push_back(p.string());
  }
  if (ec) return Status::IoError(path + ": cannot list directory: " + ec.message(), ec.value());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kvchaos::harness
