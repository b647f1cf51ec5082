// Run results to and from JSON (see run_result.h and RESULTS.md).
#include "harness/run_result.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/json_text.h"

namespace kvchaos::harness {
namespace {

using nlohmann::json;

constexpr std::uintmax_t kMaxResultBytes = 256 << 20;

// A field that is missing or of the wrong type; caught at the top and turned into a Status.
struct FieldError {
  std::string path;
  std::string problem;
};

std::string Join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

const json& Field(const json& obj, const std::string& path, const std::string& key) {
  if (!obj.is_object()) throw FieldError{path.empty() ? "(top level)" : path, "expected an object"};
  auto it = obj.find(key);
  if (it == obj.end()) throw FieldError{Join(path, key), "missing"};
  return *it;
}

std::string String(const json& obj, const std::string& path, const std::string& key) {
  const json& v = Field(obj, path, key);
  if (!v.is_string()) throw FieldError{Join(path, key), "expected a string, got " + DumpJson(v)};
  return v.get<std::string>();
}

double Number(const json& v, const std::string& where) {
  if (!v.is_number()) throw FieldError{where, "expected a number, got " + DumpJson(v)};
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw FieldError{where, "expected a finite number"};
  return d;
}

double Number(const json& obj, const std::string& path, const std::string& key) {
  return Number(Field(obj, path, key), Join(path, key));
}

int64_t Integer(const json& v, const std::string& where) {
  if (!v.is_number_integer()) throw FieldError{where, "expected an integer, got " + DumpJson(v)};
  return v.get<int64_t>();
}

int64_t Integer(const json& obj, const std::string& path, const std::string& key) {
  return Integer(Field(obj, path, key), Join(path, key));
}

bool Bool(const json& obj, const std::string& path, const std::string& key) {
  const json& v = Field(obj, path, key);
  if (!v.is_boolean()) throw FieldError{Join(path, key), "expected true or false, got " + DumpJson(v)};
  return v.get<bool>();
}

std::optional<double> OptionalNumber(const json& obj, const std::string& path, const std::string& key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  return Number(*it, Join(path, key));
}

const json& Array(const json& obj, const std::string& path, const std::string& key) {
  const json& v = Field(obj, path, key);
  if (!v.is_array()) throw FieldError{Join(path, key), "expected a list"};
  return v;
}

std::string Item(const std::string& path, const std::string& key, size_t i) {
  return Join(path, key) + "[" + std::to_string(i) + "]";
}

json OptionalJson(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The counters, by name: one table drives writing, reading and rejecting unknown names.
struct CounterField {
  const char* name;
  int64_t RunCounters::*integer;
  double RunCounters::*real;
};
constexpr CounterField kCounters[] = {
    {"saves", &RunCounters::saves, nullptr},
    {"loads", &RunCounters::loads, nullptr},
    {"failovers", &RunCounters::failovers, nullptr},
    {"reelections", &RunCounters::reelections, nullptr},
    {"unnecessary_failovers", &RunCounters::unnecessary_failovers, nullptr},
    {"stale_writes_accepted", &RunCounters::stale_writes_accepted, nullptr},
    {"stale_writes_rejected", &RunCounters::stale_writes_rejected, nullptr},
    {"dual_acting_windows", &RunCounters::dual_acting_windows, nullptr},
    {"dual_acting_ms", nullptr, &RunCounters::dual_acting_ms},
    {"token_regressions", &RunCounters::token_regressions, nullptr},
    {"duplicate_lock_holders", &RunCounters::duplicate_lock_holders, nullptr},
    {"lease_terms_checked", &RunCounters::lease_terms_checked, nullptr},
    {"lease_overruns", &RunCounters::lease_overruns, nullptr},
    {"lease_overrun_max_ms", nullptr, &RunCounters::lease_overrun_max_ms},
    {"corrupt_reads_detected", &RunCounters::corrupt_reads_detected, nullptr},
    {"corrupt_reads_returned", &RunCounters::corrupt_reads_returned, nullptr},
    {"misrouted_reads_reported", &RunCounters::misrouted_reads_reported, nullptr},
    {"acked_blocks", &RunCounters::acked_blocks, nullptr},
    {"acked_blocks_unreadable", &RunCounters::acked_blocks_unreadable, nullptr},
    {"trace_events", &RunCounters::trace_events, nullptr},
};

RunCounters CountersFromJson(const json& j, const std::string& path) {
  if (!j.is_object()) throw FieldError{path, "expected an object"};
  RunCounters c;
  for (const auto& [key, value] : j.items()) {
    const CounterField* field = nullptr;
    for (const CounterField& f : kCounters) {
      if (key == f.name) field = &f;
    }
    if (field == nullptr) throw FieldError{Join(path, key), "unknown counter"};
    if (field->integer != nullptr) {
      const int64_t v = Integer(value, Join(path, key));
      if (v < 0) throw FieldError{Join(path, key), "a counter cannot be negative"};
      c.*(field->integer) = v;
    } else {
      const double v = Number(value, Join(path, key));
      if (v < 0) throw FieldError{Join(path, key), "cannot be negative"};
      c.*(field->real) = v;
    }
  }
  return c;
}

RunResult FromJsonOrThrow(const json& j) {
  RunResult r;
  const std::string format = String(j, "", "format");
  if (format != kResultFormat) {
    throw FieldError{"format", "'" + format + "' is not a format this build reads (" + kResultFormat + ")"};
  }
  const json& scenario = Field(j, "", "scenario");
  r.scenario_name = String(scenario, "scenario", "name");
  r.scenario_file = String(scenario, "scenario", "file");
  r.scenario_hash = String(scenario, "scenario", "hash");
  if (auto both = scenario.find("both_modes"); both != scenario.end()) {  // absent before it existed
    if (!both->is_boolean()) throw FieldError{"scenario.both_modes", "expected true or false"};
    r.both_modes = both->get<bool>();
  }
  r.mode = String(j, "", "mode");
  if (r.mode != "sim" && r.mode != "real") throw FieldError{"mode", "expected sim or real, got '" + r.mode + "'"};
  const json& seed = Field(j, "", "seed");
  if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<int64_t>() >= 0)) {
    throw FieldError{"seed", "expected a non-negative integer, got " + DumpJson(seed)};
  }
  r.seed = seed.get<uint64_t>();
  r.build_id = String(j, "", "build_id");
  r.version = String(j, "", "version");
  r.trace_hash = String(j, "", "trace_hash");
  r.duration_ms = Number(j, "", "duration_ms");
  r.wall_ms = Number(j, "", "wall_ms");
  r.nodes = static_cast<int>(Integer(j, "", "nodes"));
  if (r.nodes < 0) throw FieldError{"nodes", "cannot be negative"};
  if (j.contains("coordination")) r.coordination = String(j, "", "coordination");  // absent before it existed
  const json& bound = Field(j, "", "failover_bound_ms");
  if (!bound.is_null()) r.failover_bound_ms = Integer(bound, "failover_bound_ms");
  r.error = String(j, "", "error");
  // Absent in results written before these existed.
  if (j.contains("class_failover_bounds_ms")) {
    const json& bounds = Field(j, "", "class_failover_bounds_ms");
    if (!bounds.is_object()) throw FieldError{"class_failover_bounds_ms", "expected a mapping of class to milliseconds"};
    for (const auto& [name, ms] : bounds.items()) r.class_failover_bounds_ms[name] = Integer(ms, "class_failover_bounds_ms." + name);
  }
  if (j.contains("interrupted")) r.interrupted = Bool(j, "", "interrupted");
  if (j.contains("program")) r.program = String(j, "", "program");
  if (j.contains("run_flags")) {
    const json& flags = Array(j, "", "run_flags");
    for (size_t i = 0; i < flags.size(); ++i) {
      if (!flags[i].is_string()) throw FieldError{Item("", "run_flags", i), "expected a string, got " + DumpJson(flags[i])};
      r.run_flags.push_back(flags[i].get<std::string>());
    }
  }
  const bool passed = Bool(j, "", "passed");

  const json& verdicts = Array(j, "", "verdicts");
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const std::string p = Item("", "verdicts", i);
    r.verdicts.push_back({String(verdicts[i], p, "name"), Bool(verdicts[i], p, "passed"),
                          String(verdicts[i], p, "detail")});
  }
  const json& failovers = Array(j, "", "failovers");
  for (size_t i = 0; i < failovers.size(); ++i) {
    const std::string p = Item("", "failovers", i);
    const json& f = failovers[i];
    FailoverEvent e;
    e.fault_class = String(f, p, "fault_class");
    e.fault_at_ms = Number(f, p, "fault_at_ms");
    e.old_leader = static_cast<int>(Integer(f, p, "old_leader"));
    e.new_leader = static_cast<int>(Integer(f, p, "new_leader"));
    e.old_leader_stopped_ms = OptionalNumber(f, p, "old_leader_stopped_ms");
    e.lock_acquired_ms = OptionalNumber(f, p, "lock_acquired_ms");
    e.serving_ms = Number(f, p, "serving_ms");
    e.unnecessary = Bool(f, p, "unnecessary");
    if (e.serving_ms < e.fault_at_ms) {
      throw FieldError{p + ".serving_ms", "is before fault_at_ms: a failover cannot end before its fault"};
    }
    r.failovers.push_back(e);
  }
  const json& leadership = Array(j, "", "leadership");
  for (size_t i = 0; i < leadership.size(); ++i) {
    const std::string p = Item("", "leadership", i);
    const json& s = leadership[i];
    LeadershipSpan span{static_cast<int>(Integer(s, p, "node")), Number(s, p, "start_ms"), Number(s, p, "end_ms"),
                        Bool(s, p, "acting")};
    if (span.end_ms < span.start_ms) throw FieldError{p + ".end_ms", "is before start_ms"};
    r.leadership.push_back(span);
  }
  const json& faults = Array(j, "", "faults");
  for (size_t i = 0; i < faults.size(); ++i) {
    const std::string p = Item("", "faults", i);
    const json& f = faults[i];
    r.faults.push_back({String(f, p, "fault_class"), String(f, p, "target"), Number(f, p, "start_ms"),
                        OptionalNumber(f, p, "end_ms")});
  }
  r.counters = CountersFromJson(Field(j, "", "counters"), "counters");
  // Absent in results written before it existed, null when the run measured no data plane.
  if (auto dp = j.find("data_plane"); dp != j.end() && !dp->is_null()) {
    DataPlane d;
    const json& errors = Field(*dp, "data_plane", "errors_by_code");
    if (!errors.is_object()) throw FieldError{"data_plane.errors_by_code", "expected an object"};
    for (const auto& [code, count] : errors.items()) {
      const std::string p = "data_plane.errors_by_code." + code;
      StatusCode parsed;
      if (!StatusCodeFromName(code, &parsed)) throw FieldError{p, "not a status code name"};
      const int64_t n = Integer(count, p);
      if (n < 0) throw FieldError{p, "cannot be negative"};
      d.errors_by_code[code] = n;
    }
    d.health_transitions = Integer(*dp, "data_plane", "health_transitions");
    if (d.health_transitions < 0) throw FieldError{"data_plane.health_transitions", "cannot be negative"};
    if (dp->contains("saves_cut_by_power_loss")) {  // absent in results written before it existed
      d.saves_cut_by_power_loss = Integer(*dp, "data_plane", "saves_cut_by_power_loss");
      if (d.saves_cut_by_power_loss < 0) throw FieldError{"data_plane.saves_cut_by_power_loss", "cannot be negative"};
    }
    r.data_plane = std::move(d);
  }
  // Absent when the run's history was not checked (and in results written before it existed).
  if (auto h = j.find("history"); h != j.end() && !h->is_null()) {
    HistoryResult hr;
    auto count = [&](const char* key) {
      const int64_t n = Integer(*h, "history", key);
      if (n < 0) throw FieldError{std::string("history.") + key, "cannot be negative"};
      return n;
    };
    hr.operations = count("operations");
    hr.keys = count("keys");
    hr.verdict = String(*h, "history", "verdict");
    if (hr.verdict != "linearizable" && hr.verdict != "not linearizable" && hr.verdict != "unknown (budget)") {
      throw FieldError{"history.verdict", "expected linearizable, not linearizable or unknown (budget), got '" + hr.verdict + "'"};
    }
    hr.keys_not_linearizable = count("keys_not_linearizable");
    hr.keys_unknown_budget = count("keys_unknown_budget");
    hr.lost_writes = count("lost_writes");
    hr.non_monotonic_reads = count("non_monotonic_reads");
    hr.read_your_writes = count("read_your_writes");
    hr.check_ms = Number(*h, "history", "check_ms");
    hr.first_anomaly = String(*h, "history", "first_anomaly");
    hr.anomaly_key = String(*h, "history", "anomaly_key");
    const json& ops = Array(*h, "history", "anomaly");
    for (size_t i = 0; i < ops.size(); ++i) {
      if (!ops[i].is_string()) throw FieldError{Item("history", "anomaly", i), "expected a string, got " + DumpJson(ops[i])};
      hr.anomaly.push_back(ops[i].get<std::string>());
    }
    // Absent in results written before the report drew them.
    if (auto ops_json = h->find("anomaly_ops"); ops_json != h->end()) {
      if (!ops_json->is_array()) throw FieldError{"history.anomaly_ops", "expected an array, got " + DumpJson(*ops_json)};
      for (size_t i = 0; i < ops_json->size(); ++i) {
        const std::string where = Item("history", "anomaly_ops", i);
        const json& o = (*ops_json)[i];
        AnomalyOp op;
        op.client = String(o, where, "client");
        op.op = String(o, where, "op");
        op.key = String(o, where, "key");
        op.outcome = String(o, where, "outcome");
        if (op.outcome != "ok" && op.outcome != "failed" && op.outcome != "unknown") {
          throw FieldError{where + ".outcome", "expected ok, failed or unknown, got '" + op.outcome + "'"};
        }
        op.invoke_ms = Number(o, where, "invoke_ms");
        op.complete_ms = Number(o, where, "complete_ms");
        if (op.complete_ms < op.invoke_ms) throw FieldError{where + ".complete_ms", "is before invoke_ms"};
        op.value = String(o, where, "value");
        op.node = String(o, where, "node");
        op.term = Integer(o, where, "term");
        hr.anomaly_ops.push_back(std::move(op));
      }
    }
    hr.file = String(*h, "history", "file");
    r.history = std::move(hr);
  }
  if (passed != r.passed()) {
    throw FieldError{"passed", std::string("says ") + (passed ? "true" : "false") +
                                   " but the verdicts and error say otherwise"};
  }
  return r;
}

}  // namespace

int64_t CountReelections(const std::vector<FailoverEvent>& failovers) {
  return std::count_if(failovers.begin(), failovers.end(), [](const FailoverEvent& f) { return f.reelection(); });
}

bool RunResult::passed() const {
  if (!error.empty()) return false;
  for (const InvariantVerdict& v : verdicts) {
    if (!v.passed) return false;
  }
  return true;
}

std::string ShellQuote(const std::string& text) {
  bool plain = !text.empty();
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '/' || c == ':' || c == '=' || c == '+' || c == '-';
    plain = plain && ok;
  }
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string RunResult::ReproCommand() const {
  std::string command = ShellQuote(program) + " run " + ShellQuote(scenario_file) + " --seed " + std::to_string(seed);
  if (mode == "real" || both_modes) command += " --mode " + mode;
  for (const std::string& flag : run_flags) command += " " + ShellQuote(flag);
  return command;
}

std::string RunResult::FileName() const {
  return scenario_name + "-" + (both_modes ? mode + "-" : "") + std::to_string(seed) + ".json";
}

std::string RunResult::HistoryFileName() const {
  return scenario_name + "-" + (both_modes ? mode + "-" : "") + std::to_string(seed) + ".history.jsonl";
}

namespace {

json AnomalyOpsJson(const std::vector<AnomalyOp>& ops) {
  json out = json::array();
  for (const AnomalyOp& o : ops) {
    out.push_back({{"client", o.client}, {"op", o.op}, {"key", o.key}, {"outcome", o.outcome},
                   {"invoke_ms", o.invoke_ms}, {"complete_ms", o.complete_ms}, {"value", o.value},
                   {"node", o.node}, {"term", o.term}});
  }
  return out;
}

json HistoryJson(const HistoryResult& h) {
  return {{"operations", h.operations},
          {"keys", h.keys},
          {"verdict", h.verdict},
          {"keys_not_linearizable", h.keys_not_linearizable},
          {"keys_unknown_budget", h.keys_unknown_budget},
          {"lost_writes", h.lost_writes},
          {"non_monotonic_reads", h.non_monotonic_reads},
          {"read_your_writes", h.read_your_writes},
          {"check_ms", h.check_ms},
          {"first_anomaly", h.first_anomaly},
          {"anomaly_key", h.anomaly_key},
          {"anomaly", h.anomaly},
          {"anomaly_ops", AnomalyOpsJson(h.anomaly_ops)},
          {"file", h.file}};
}

}  // namespace

json ToJson(const RunResult& r) {
  json verdicts = json::array();
  for (const InvariantVerdict& v : r.verdicts) {
    verdicts.push_back({{"name", v.name}, {"passed", v.passed}, {"detail", v.detail}});
  }
  json failovers = json::array();
  for (const FailoverEvent& f : r.failovers) {
    failovers.push_back({{"fault_class", f.fault_class},
                         {"fault_at_ms", f.fault_at_ms},
                         {"old_leader", f.old_leader},
                         {"new_leader", f.new_leader},
                         {"old_leader_stopped_ms", OptionalJson(f.old_leader_stopped_ms)},
                         {"lock_acquired_ms", OptionalJson(f.lock_acquired_ms)},
                         {"serving_ms", f.serving_ms},
                         {"failover_ms", f.failover_ms()},
                         {"unnecessary", f.unnecessary}});
  }
  json leadership = json::array();
  for (const LeadershipSpan& s : r.leadership) {
    leadership.push_back({{"node", s.node}, {"start_ms", s.start_ms}, {"end_ms", s.end_ms}, {"acting", s.acting}});
  }
  json faults = json::array();
  for (const AppliedFault& f : r.faults) {
    faults.push_back({{"fault_class", f.fault_class},
                      {"target", f.target},
                      {"start_ms", f.start_ms},
                      {"end_ms", OptionalJson(f.end_ms)}});
  }
  json counters = json::object();
  for (const CounterField& f : kCounters) {
    counters[f.name] = f.integer != nullptr ? json(r.counters.*(f.integer)) : json(r.counters.*(f.real));
  }
  return json{{"format", kResultFormat},
              {"scenario",
               {{"name", r.scenario_name}, {"file", r.scenario_file}, {"hash", r.scenario_hash}, {"both_modes", r.both_modes}}},
              {"mode", r.mode},
              {"seed", r.seed},
              {"build_id", r.build_id},
              {"version", r.version},
              {"trace_hash", r.trace_hash},
              {"duration_ms", r.duration_ms},
              {"wall_ms", r.wall_ms},
              {"nodes", r.nodes},
              {"coordination", r.coordination},
              {"failover_bound_ms", r.failover_bound_ms ? json(*r.failover_bound_ms) : json(nullptr)},
              {"class_failover_bounds_ms", r.class_failover_bounds_ms},
              {"passed", r.passed()},
              {"error", r.error},
              {"interrupted", r.interrupted},
              {"program", r.program},
              {"run_flags", r.run_flags},
              {"repro", r.ReproCommand()},
              {"verdicts", verdicts},
              {"failovers", failovers},
              {"leadership", leadership},
              {"faults", faults},
              {"counters", counters},
              {"data_plane", r.data_plane ? json{{"errors_by_code", r.data_plane->errors_by_code},
                                                 {"health_transitions", r.data_plane->health_transitions},
                                                 {"saves_cut_by_power_loss", r.data_plane->saves_cut_by_power_loss}}
                                          : json(nullptr)},
              {"history", r.history ? HistoryJson(*r.history) : json(nullptr)}};
}

Result<RunResult> RunResultFromJson(const json& j, const std::string& origin) {
  try {
    return FromJsonOrThrow(j);
  } catch (const FieldError& e) {
    return Status::InvalidArgument(origin + ": " + e.path + ": " + e.problem);
  } catch (const json::exception& e) {
    return Status::InvalidArgument(origin + ": " + e.what());
  }
}

Status WriteRunResult(const RunResult& result, const std::string& path) {
  // Write beside the target and rename, so a reader never sees half a result.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError("result '" + path + "': cannot create '" + tmp + "'", errno);
    out << DumpJson(ToJson(result), 2) << "\n";
    out.flush();
    if (!out) return Status::IoError("result '" + path + "': write to '" + tmp + "' failed", errno);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Status::IoError("result '" + path + "': rename from '" + tmp + "' failed: " + ec.message(), ec.value());
  }
  return Status::Ok();
}

Result<RunResult> ReadRunResult(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Status::InvalidArgument(path + ": cannot read result: " + ec.message());
  if (size > kMaxResultBytes) return Status::InvalidArgument(path + ": too large for a result file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument(path + ": cannot open result: " + ErrnoText(errno));
  std::ostringstream text;
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::parse_error& e) {
    return Status::InvalidArgument(path + ": not valid JSON: " + e.what());
  }
  return RunResultFromJson(j, path);
}

}  // namespace kvchaos::harness
