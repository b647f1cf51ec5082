// Rule reading and validation; see rule_parser.h for the format.
#include "faultfs/rule_parser.h"

#include <set>

namespace kvchaos::faultfs {
namespace {

void ReadOps(ConfigSection& s, Rule& rule) {
  const OpMask allowed = ActionOps(rule.action);
  if (!s.Has("ops")) {
    rule.ops = allowed;
    return;
  }
  std::vector<std::string> names;
  if (!s.Optional("ops", &names)) return;
  if (names.empty()) {
    s.Problem("ops", "must list at least one operation");
    return;
  }
  OpMask mask = 0;
  for (const std::string& name : names) {
    std::optional<Op> op = OpFromName(name);
    if (!op) {
      std::string all;
      for (int i = 0; i < kOpCount; ++i) all += (i ? ", " : "") + std::string(OpName(static_cast<Op>(i)));
      s.Problem("ops", "unknown operation '" + name + "' (known: " + all + ")");
      continue;
    }
    if ((OpBit(*op) & allowed) == 0) {
      s.Problem("ops", "action '" + std::string(ActionName(rule.action)) + "' cannot apply to '" + name + "'");
      continue;
    }
    mask |= OpBit(*op);
  }
  rule.ops = mask;
}

void ReadTrigger(ConfigSection& s, Rule& rule) {
  int given = 0;
  if (s.Has("every")) {
    ++given;
    rule.trigger = Trigger::kEvery;
    if (s.Optional("every", &rule.every) && rule.every == 0) s.Problem("every", "must be >= 1");
  }
  if (s.Has("nth")) {
    ++given;
    rule.trigger = Trigger::kNth;
    if (s.Optional("nth", &rule.nth) && rule.nth == 0) s.Problem("nth", "must be >= 1 (calls count from 1)");
  }
  if (s.Has("probability")) {
    ++given;
    rule.trigger = Trigger::kProbability;
    if (s.Optional("probability", &rule.probability) && !(rule.probability >= 0 && rule.probability <= 1)) {
      s.Problem("probability", "must be within [0, 1]");
    }
  }
  if (given > 1) s.Problem("every", "give only one of every, nth and probability");
  s.OptionalDuration("from", &rule.from);
  Duration until{0};
  if (s.OptionalDuration("until", &until)) {
    rule.until = until;
    if (until <= rule.from) s.Problem("until", "must be after 'from'");
  }
  s.Optional("max_hits", &rule.max_hits);
}

void ReadErrno(ConfigSection& s, Rule& rule) {
  std::string name;
  if (!s.Optional("errno", &name)) return;
  if (name == "ENOSYS") {
    s.Problem("errno", "ENOSYS is refused: for fsync, flush, fallocate and xattr calls the kernel would stop "
                       "sending the operation for the rest of the mount");
    return;
  }
  std::optional<int> err = ErrnoFromName(name);
  if (!err) {
    s.Problem("errno", "unknown errno '" + name + "' (known: " + ErrnoNames() + ")");
    return;
  }
  rule.err = *err;
}

void ReadLatency(ConfigSection& s, Rule& rule) {
  std::string dist = "fixed";
  s.Optional("dist", &dist);
  if (dist == "fixed") {
    rule.dist = LatencyDist::kFixed;
  } else if (dist == "uniform") {
    rule.dist = LatencyDist::kUniform;
  } else if (dist == "exponential") {
    rule.dist = LatencyDist::kExponential;
  } else {
    s.Problem("dist", "unknown distribution '" + dist + "' (known: fixed, uniform, exponential)");
  }
  if (!s.RequiredDuration("latency", &rule.latency)) return;
  if (rule.latency.count() < 0) s.Problem("latency", "must be >= 0");
  if (rule.dist == LatencyDist::kUniform) {
    if (s.RequiredDuration("latency_max", &rule.latency_max) && rule.latency_max < rule.latency) {
      s.Problem("latency_max", "must be >= latency");
    }
  } else if (rule.dist == LatencyDist::kExponential && rule.latency.count() == 0) {
    s.Problem("latency", "the mean of an exponential latency must be > 0");
  }
}

void ReadBits(ConfigSection& s, Rule& rule) {
  if (s.Optional("bits", &rule.bits) && rule.bits == 0) s.Problem("bits", "must be >= 1");
  if (s.Optional("bit_rate", &rule.bit_rate)) {
    if (s.Has("bits")) s.Problem("bit_rate", "give bits or bit_rate, not both");
    if (!(rule.bit_rate > 0 && rule.bit_rate <= 1)) s.Problem("bit_rate", "must be within (0, 1]");
  }
}

// Keys each action reads besides the match keys.
void ReadActionKeys(ConfigSection& s, Rule& rule) {
  switch (rule.action) {
    case ActionKind::kErrno:
      ReadErrno(s, rule);
      break;
    case ActionKind::kTornWrite:
      ReadErrno(s, rule);
      [[fallthrough]];
    case ActionKind::kShortRead:
    case ActionKind::kShortWrite: {
      uint64_t bytes = 0;
      if (s.OptionalByteSize("bytes", &bytes)) rule.bytes = bytes;
      break;
    }
    case ActionKind::kLatency:
      ReadLatency(s, rule);
      break;
    case ActionKind::kFlipReadBits:
    case ActionKind::kCorruptWrite:
      ReadBits(s, rule);
      break;
    case ActionKind::kMisdirectedWrite:
      s.Optional("shift", &rule.shift);
      break;
    case ActionKind::kBadRange:
      s.OptionalByteSize("length", &rule.length);
      break;
    case ActionKind::kDropUnsynced:
      s.Optional("dir_sync", &rule.dir_sync);
      break;
    case ActionKind::kMisdirectedRead:
      if (s.Optional("source", &rule.source)) {
        while (!rule.source.empty() && rule.source.front() == '/') rule.source.erase(0, 1);
        if (rule.source.empty()) s.Problem("source", "must name a glob of files inside the mount (e.g. \"**\")");
      }
      break;
    case ActionKind::kHang:
    case ActionKind::kLostWrite:
      break;
  }
}

}  // namespace

Rule ReadRule(ConfigSection& s) {
  Rule rule;
  if (s.Required("id", &rule.id) && rule.id.empty()) s.Problem("id", "must not be empty");
  if (s.Optional("path", &rule.path)) {
    while (!rule.path.empty() && rule.path.front() == '/') rule.path.erase(0, 1);
    if (rule.path.empty()) rule.path = "**";
  }
  std::string action;
  if (s.Required("action", &action)) {
    std::optional<ActionKind> kind = ActionFromName(action);
    if (!kind) {
      s.Problem("action", "unknown action '" + action +
                              "' (known: errno, latency, hang, flip_read_bits, corrupt_write, short_read, "
                              "short_write, torn_write, lost_write, misdirected_write, bad_range, drop_unsynced, misdirected_read)");
    } else {
      rule.action = *kind;
    }
  }
  ReadOps(s, rule);
  ReadTrigger(s, rule);
  ReadActionKeys(s, rule);
  s.Done();
  return rule;
}

namespace {

Result<RulesFile> ReadRulesFile(Result<ConfigFile> file) {
  if (!file.ok()) return file.status();
  ConfigSection root = file->Root();
  RulesFile out;
  uint64_t seed = 0;
  if (root.Optional("seed", &seed)) out.seed = seed;
  std::set<std::string> ids;
  for (ConfigSection& item : root.SectionList("rules")) {
    Rule rule = ReadRule(item);
    if (!rule.id.empty() && !ids.insert(rule.id).second) item.Problem("id", "duplicate rule id '" + rule.id + "'");
    out.rules.push_back(std::move(rule));
  }
  root.Done();
  KVCHAOS_RETURN_IF_ERROR(file->Finish());
  return out;
}

}  // namespace

Result<RulesFile> ParseRulesText(std::string_view text, const std::string& name) {
  return ReadRulesFile(ConfigFile::Parse(text, name));
}

Result<RulesFile> LoadRulesFile(const std::string& path) { return ReadRulesFile(ConfigFile::Load(path)); }

Result<Rule> ParseRuleText(std::string_view text, const std::string& name) {
  Result<ConfigFile> file = ConfigFile::Parse(text, name);
  if (!file.ok()) return file.status();
  ConfigSection root = file->Root();
  Rule rule = ReadRule(root);
  KVCHAOS_RETURN_IF_ERROR(file->Finish());
  return rule;
}

}  // namespace kvchaos::faultfs
