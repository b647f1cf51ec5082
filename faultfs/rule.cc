// Names of operations, actions and errnos used by rules, the control protocol and the fault log.
#include "faultfs/rule.h"

#include <cerrno>
#include <array>
#include <utility>

namespace kvchaos::faultfs {
namespace {

constexpr std::array<std::string_view, kOpCount> kOpNames = {
    "lookup",  "getattr", "setattr", "readlink",   "mknod",   "mkdir",    "symlink",     "link",
    "unlink",  "rmdir",   "rename",  "open",       "create",  "read",     "write",       "flush",
    "release", "fsync",   "opendir", "readdir",    "releasedir", "fsyncdir", "statfs",   "access",
    "setxattr", "getxattr", "listxattr", "removexattr", "fallocate"};

constexpr std::array<std::pair<ActionKind, std::string_view>, 13> kActionNames = {{
    {ActionKind::kErrno, "errno"},
    {ActionKind::kLatency, "latency"},
    {ActionKind::kHang, "hang"},
    {ActionKind::kFlipReadBits, "flip_read_bits"},
    {ActionKind::kCorruptWrite, "corrupt_write"},
    {ActionKind::kShortRead, "short_read"},
    {ActionKind::kShortWrite, "short_write"},
    {ActionKind::kTornWrite, "torn_write"},
    {ActionKind::kLostWrite, "lost_write"},
    {ActionKind::kMisdirectedWrite, "misdirected_write"},
    {ActionKind::kBadRange, "bad_range"},
    {ActionKind::kDropUnsynced, "drop_unsynced"},
    {ActionKind::kMisdirectedRead, "misdirected_read"},
}};

constexpr std::array<std::pair<std::string_view, int>, 27> kErrnos = {{
    {"EIO", EIO},         {"ENOSPC", ENOSPC},   {"EROFS", EROFS},       {"ETIMEDOUT", ETIMEDOUT},
    {"EACCES", EACCES},   {"EPERM", EPERM},     {"ENOENT", ENOENT},     {"EEXIST", EEXIST},
    {"EAGAIN", EAGAIN},   {"EINTR", EINTR},     {"EBUSY", EBUSY},       {"EDQUOT", EDQUOT},
    {"EFBIG", EFBIG},     {"ENODATA", ENODATA}, {"EOPNOTSUPP", EOPNOTSUPP}, {"ENOTEMPTY", ENOTEMPTY},
    {"EMFILE", EMFILE},   {"ENFILE", ENFILE},   {"ENOMEM", ENOMEM},     {"ENAMETOOLONG", ENAMETOOLONG},
    {"ESTALE", ESTALE},   {"ENOTCONN", ENOTCONN}, {"ECONNRESET", ECONNRESET}, {"EBADF", EBADF},
    {"EINVAL", EINVAL},   {"EXDEV", EXDEV},     {"ENXIO", ENXIO},
}};

}  // namespace

std::string_view OpName(Op op) { return kOpNames[static_cast<int>(op)]; }

std::optional<Op> OpFromName(std::string_view name) {
  for (int i = 0; i < kOpCount; ++i) {
    if (kOpNames[i] == name) return static_cast<Op>(i);
  }
  if (name == "fdatasync") return Op::kFsync;
  return std::nullopt;
}

std::string_view ActionName(ActionKind kind) {
  for (const auto& [k, name] : kActionNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<ActionKind> ActionFromName(std::string_view name) {
  for (const auto& [k, n] : kActionNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

OpMask ActionOps(ActionKind kind) {
  switch (kind) {
    case ActionKind::kErrno:
    case ActionKind::kLatency:
    case ActionKind::kHang:
      return kAllOps;
    case ActionKind::kFlipReadBits:
    case ActionKind::kShortRead:
    case ActionKind::kMisdirectedRead:
      return OpBit(Op::kRead);
    case ActionKind::kBadRange:
      return OpBit(Op::kRead) | OpBit(Op::kWrite);
    case ActionKind::kCorruptWrite:
    case ActionKind::kShortWrite:
    case ActionKind::kTornWrite:
    case ActionKind::kLostWrite:
    case ActionKind::kMisdirectedWrite:
      return OpBit(Op::kWrite);
    case ActionKind::kDropUnsynced:
      return OpBit(Op::kWrite) | OpBit(Op::kCreate);
  }
  return 0;
}

std::optional<int> ErrnoFromName(std::string_view name) {
  for (const auto& [n, value] : kErrnos) {
    if (n == name) return value;
  }
  return std::nullopt;
}

std::string ErrnoName(int err) {
  for (const auto& [n, value] : kErrnos) {
    if (value == err) return std::string(n);
  }
  return "errno " + std::to_string(err);
}

std::string ErrnoNames() {
  std::string out;
  for (const auto& [n, value] : kErrnos) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

nlohmann::json RuleToJson(const Rule& rule) {
  nlohmann::json j;
  j["id"] = rule.id;
  j["path"] = rule.path;
  nlohmann::json ops = nlohmann::json::array();
  for (int i = 0; i < kOpCount; ++i) {
    if (rule.ops & (OpMask{1} << i)) ops.push_back(std::string(kOpNames[i]));
  }
  j["ops"] = ops;
  switch (rule.trigger) {
    case Trigger::kEvery: j["every"] = rule.every; break;
    case Trigger::kNth: j["nth"] = rule.nth; break;
    case Trigger::kProbability: j["probability"] = rule.probability; break;
  }
  if (rule.from.count() > 0) j["from_ms"] = ToMillis(rule.from);
  if (rule.until) j["until_ms"] = ToMillis(*rule.until);
  if (rule.max_hits > 0) j["max_hits"] = rule.max_hits;
  j["action"] = std::string(ActionName(rule.action));
  switch (rule.action) {
    case ActionKind::kErrno:
    case ActionKind::kTornWrite:
      j["errno"] = ErrnoName(rule.err);
      break;
    case ActionKind::kLatency:
      j["latency_us"] = std::chrono::duration_cast<std::chrono::microseconds>(rule.latency).count();
      if (rule.dist == LatencyDist::kUniform) {
        j["dist"] = "uniform";
        j["latency_max_us"] = std::chrono::duration_cast<std::chrono::microseconds>(rule.latency_max).count();
      } else {
        j["dist"] = rule.dist == LatencyDist::kFixed ? "fixed" : "exponential";
      }
      break;
    case ActionKind::kFlipReadBits:
    case ActionKind::kCorruptWrite:
      if (rule.bit_rate > 0) {
        j["bit_rate"] = rule.bit_rate;
      } else {
        j["bits"] = rule.bits;
      }
      break;
    case ActionKind::kMisdirectedWrite:
      j["shift"] = rule.shift;
      break;
    case ActionKind::kBadRange:
      j["length"] = rule.length;
      break;
    case ActionKind::kDropUnsynced:
      j["dir_sync"] = rule.dir_sync;
      break;
    case ActionKind::kMisdirectedRead:
      j["source"] = rule.source.empty() ? rule.path : rule.source;
      break;
    default:
      break;
  }
  if (rule.bytes) j["bytes"] = *rule.bytes;
  return j;
}

}  // namespace kvchaos::faultfs
