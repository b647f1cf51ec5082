// History records, the thread-safe recorder, and the JSON-lines format (see the header).
#include "sim/history.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>
#include <utility>

#include "core/common/json_text.h"

namespace kvchaos::sim {
namespace {

constexpr std::array<std::pair<HistoryOp, const char*>, 6> kOpNames = {{
    {HistoryOp::kStartWrite, "start_write"},
    {HistoryOp::kFinishWrite, "finish_write"},
    {HistoryOp::kGetLocation, "get_location"},
    {HistoryOp::kRemove, "remove"},
    {HistoryOp::kSave, "save"},
    {HistoryOp::kLoad, "load"},
}};

constexpr std::array<std::pair<HistoryOutcome, const char*>, 3> kOutcomeNames = {{
    {HistoryOutcome::kOk, "ok"},
    {HistoryOutcome::kFailed, "failed"},
    {HistoryOutcome::kUnknown, "unknown"},
}};

// Reads a required field of type T; the error names the source and the field.
template <typename T>
Status Field(const nlohmann::json& j, const char* name, const std::string& where, T& out) {
  auto it = j.find(name);
  if (it == j.end()) return Status::InvalidArgument(where + ": missing field '" + name + "'");
  bool typed = false;
  if constexpr (std::is_same_v<T, std::string>) {
    typed = it->is_string();
  } else if constexpr (std::is_same_v<T, bool>) {
    typed = it->is_boolean();
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    typed = it->is_number_unsigned();
  } else {
    typed = it->is_number_integer();
  }
  if (!typed) return Status::InvalidArgument(where + ": field '" + name + "' has the wrong type: " + DumpJson(*it));
  out = it->get<T>();
  return Status::Ok();
}

}  // namespace

const char* HistoryOpName(HistoryOp op) {
  for (const auto& [value, name] : kOpNames) {
    if (value == op) return name;
  }
  return "?";
}

Result<HistoryOp> ParseHistoryOp(std::string_view text) {
  for (const auto& [value, name] : kOpNames) {
    if (text == name) return value;
  }
  return Status::InvalidArgument("unknown history op '" + std::string(text) +
                                 "' (start_write, finish_write, get_location, remove, save, load)");
}

const char* HistoryOutcomeName(HistoryOutcome outcome) {
  for (const auto& [value, name] : kOutcomeNames) {
    if (value == outcome) return name;
  }
  return "?";
}

Result<HistoryOutcome> ParseHistoryOutcome(std::string_view text) {
  for (const auto& [value, name] : kOutcomeNames) {
    if (text == name) return value;
  }
  return Status::InvalidArgument("unknown history outcome '" + std::string(text) + "' (ok, failed, unknown)");
}

int64_t TermOfSession(std::string_view session_id) {
  constexpr std::string_view kPrefix = "ws-";
  if (!session_id.starts_with(kPrefix)) return -1;
  session_id.remove_prefix(kPrefix.size());
  const size_t dash = session_id.find('-');
  if (dash == std::string_view::npos || dash == 0) return -1;
  int64_t term = -1;
  auto [end, ec] = std::from_chars(session_id.data(), session_id.data() + dash, term);
  if (ec != std::errc() || end != session_id.data() + dash) return -1;
  return term;
}

int64_t HistoryRecorder::NowNs() const {
  const int64_t now = now_ns_ ? now_ns_() : runtime_.Now().time_since_epoch().count();
  MutexLock lock(mu_);
  last_stamp_ = std::max(now, last_stamp_ + 1);
  return last_stamp_;
}

void HistoryRecorder::Add(HistoryRecord record) {
  MutexLock lock(mu_);
  record.id = next_id_++;
  records_.push_back(std::move(record));
}

namespace {

void SortByInvoke(std::vector<HistoryRecord>& records) {
  std::sort(records.begin(), records.end(), [](const HistoryRecord& a, const HistoryRecord& b) {
    return a.invoke_ns != b.invoke_ns ? a.invoke_ns < b.invoke_ns : a.id < b.id;
  });
}

}  // namespace

std::vector<HistoryRecord> HistoryRecorder::Records() const {
  std::vector<HistoryRecord> out;
  {
    MutexLock lock(mu_);
    out.assign(records_.begin(), records_.end());
  }
  SortByInvoke(out);
  return out;
}

std::vector<HistoryRecord> HistoryRecorder::TakeRecords() {
  std::vector<HistoryRecord> out;
  {
    MutexLock lock(mu_);
    out.assign(std::make_move_iterator(records_.begin()), std::make_move_iterator(records_.end()));
    records_.clear();
  }
  SortByInvoke(out);
  return out;
}

size_t HistoryRecorder::size() const {
  MutexLock lock(mu_);
  return records_.size();
}

std::string ToJsonLine(const HistoryRecord& r) {
  nlohmann::ordered_json j;
  j["id"] = r.id;
  j["client"] = r.client;
  j["op"] = HistoryOpName(r.op);
  j["key"] = r.key;
  j["outcome"] = HistoryOutcomeName(r.outcome);
  if (!r.error.empty()) j["error"] = r.error;
  j["invoke_ns"] = r.invoke_ns;
  j["complete_ns"] = r.complete_ns;
  j["found"] = r.found;
  if (!r.storage.empty()) j["storage"] = r.storage;
  if (!r.location.empty()) j["location"] = r.location;
  if (!r.session.empty()) j["session"] = r.session;
  if (r.checksum) j["checksum"] = *r.checksum;
  if (r.version >= 0) j["version"] = r.version;
  if (!r.node.empty()) j["node"] = r.node;
  if (r.term >= 0) j["term"] = r.term;
  return DumpJson(nlohmann::json(j));
}

Result<HistoryRecord> HistoryRecordFromJsonLine(std::string_view line, const std::string& where) {
  Result<nlohmann::json> parsed = ParseJsonStrict(line, where);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return Status::InvalidArgument(where + ": a history record must be a JSON object");
  HistoryRecord r;
  std::string op, outcome;
  KVCHAOS_RETURN_IF_ERROR(Field(j, "id", where, r.id));
  KVCHAOS_RETURN_IF_ERROR(Field(j, "client", where, r.client));
  KVCHAOS_RETURN_IF_ERROR(Field(j, "op", where, op));
  KVCHAOS_RETURN_IF_ERROR(Field(j, "key", where, r.key));
  KVCHAOS_RETURN_IF_ERROR(Field(j, "outcome", where, outcome));
  KVCHAOS_RETURN_IF_ERROR(Field(j, "invoke_ns", where, r.invoke_ns));
  KVCHAOS_RETURN_IF_ERROR(Field(j, "complete_ns", where, r.complete_ns));
  KVCHAOS_RETURN_IF_ERROR(Field(j, "found", where, r.found));
  Result<HistoryOp> parsed_op = ParseHistoryOp(op);
  if (!parsed_op.ok()) return Status::InvalidArgument(where + ": field 'op': " + parsed_op.status().message());
  r.op = *parsed_op;
  Result<HistoryOutcome> parsed_outcome = ParseHistoryOutcome(outcome);
  if (!parsed_outcome.ok()) {
    return Status::InvalidArgument(where + ": field 'outcome': " + parsed_outcome.status().message());
  }
  r.outcome = *parsed_outcome;
  if (r.complete_ns < r.invoke_ns) {
    return Status::InvalidArgument(where + ": field 'complete_ns' " + std::to_string(r.complete_ns) +
                                   " is before 'invoke_ns' " + std::to_string(r.invoke_ns));
  }
  // Optional fields: absent means "none"; present with the wrong type is an error.
  if (j.contains("error")) KVCHAOS_RETURN_IF_ERROR(Field(j, "error", where, r.error));
  if (j.contains("storage")) KVCHAOS_RETURN_IF_ERROR(Field(j, "storage", where, r.storage));
  if (j.contains("location")) KVCHAOS_RETURN_IF_ERROR(Field(j, "location", where, r.location));
  if (j.contains("session")) KVCHAOS_RETURN_IF_ERROR(Field(j, "session", where, r.session));
  if (j.contains("checksum")) {
    int64_t checksum = 0;
    KVCHAOS_RETURN_IF_ERROR(Field(j, "checksum", where, checksum));
    r.checksum = checksum;
  }
  if (j.contains("version")) KVCHAOS_RETURN_IF_ERROR(Field(j, "version", where, r.version));
  if (j.contains("node")) KVCHAOS_RETURN_IF_ERROR(Field(j, "node", where, r.node));
  if (j.contains("term")) KVCHAOS_RETURN_IF_ERROR(Field(j, "term", where, r.term));
  return r;
}

Status WriteHistory(const std::vector<HistoryRecord>& records, const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IoError("history: cannot open '" + path + "' for writing", errno);
  for (const HistoryRecord& r : records) out << ToJsonLine(r) << '\n';
  out.flush();
  if (!out) return Status::IoError("history: writing '" + path + "' failed", errno);
  return Status::Ok();
}

Result<std::vector<HistoryRecord>> ReadHistory(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("history: cannot open '" + path + "'");
  std::vector<HistoryRecord> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Result<HistoryRecord> r = HistoryRecordFromJsonLine(line, path + ":" + std::to_string(number));
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace kvchaos::sim
