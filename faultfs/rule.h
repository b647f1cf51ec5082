// Rule: one fault-injection rule of faultfs — which calls it matches (path glob, operations,
// every/Nth/every-Kth/probability, time window, max hits) and what it does to a call it hits.
// Rules are plain values: parsing lives in rule_parser.h, matching state in rule_engine.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/runtime.h"

namespace kvchaos::faultfs {

// The operations faultfs serves; a rule matches a set of them.
enum class Op : uint8_t {
  kLookup, kGetattr, kSetattr, kReadlink, kMknod, kMkdir, kSymlink, kLink, kUnlink, kRmdir,
  kRename, kOpen, kCreate, kRead, kWrite, kFlush, kRelease, kFsync, kOpendir, kReaddir,
  kReleasedir, kFsyncdir, kStatfs, kAccess, kSetxattr, kGetxattr, kListxattr, kRemovexattr,
  kFallocate,
  kCount
};
constexpr int kOpCount = static_cast<int>(Op::kCount);
using OpMask = uint64_t;
constexpr OpMask OpBit(Op op) { return OpMask{1} << static_cast<int>(op); }
constexpr OpMask kAllOps = (OpMask{1} << kOpCount) - 1;

std::string_view OpName(Op op);
std::optional<Op> OpFromName(std::string_view name);

enum class ActionKind : uint8_t {
  kErrno,            // fail the call with `err`
  kLatency,          // delay the call, then run it normally
  kHang,             // block the call until `faultfs ctl release` (or shutdown)
  kFlipReadBits,     // flip bits in the data a read returns; the source stays intact
  kCorruptWrite,     // flip bits in the data before it is written
  kShortRead,        // return fewer bytes than asked
  kShortWrite,       // write a prefix and report that shorter count
  kTornWrite,        // write a prefix, then fail with `err`
  kLostWrite,        // report the write done, write nothing
  kMisdirectedWrite, // write the data at offset + shift
  kBadRange,         // mark the call's range bad: reads of it fail EIO until it is rewritten
  kDropUnsynced,     // remember unsynced writes and creates so that `crash` can drop them
  kMisdirectedRead,  // serve a read from another file's bytes at the same offset
};
std::string_view ActionName(ActionKind kind);
std::optional<ActionKind> ActionFromName(std::string_view name);
// Operations an action can apply to; the default op set of a rule with that action.
OpMask ActionOps(ActionKind kind);

enum class LatencyDist : uint8_t { kFixed, kUniform, kExponential };

// Which of the matching calls a rule hits. Counts are 1-based per rule.
enum class Trigger : uint8_t { kEvery, kNth, kProbability };

struct Rule {
  std::string id;
  std::string path = "**";  // glob on the path inside the mount, no leading '/'
  OpMask ops = kAllOps;

  Trigger trigger = Trigger::kEvery;
  uint64_t every = 1;        // hit calls K, 2K, 3K, … (1 = every call)
  uint64_t nth = 0;          // hit call N only
  double probability = 0;    // hit with probability p, drawn from (seed, rule id, match count)
  Duration from{0};          // window start, since the rule was installed
  std::optional<Duration> until;  // window end, since the rule was installed
  uint64_t max_hits = 0;     // 0 = unlimited

  ActionKind action = ActionKind::kErrno;
  int err = 5;               // errno for kErrno / kTornWrite (EIO)
  LatencyDist dist = LatencyDist::kFixed;
  Duration latency{0};       // fixed value, uniform low bound or exponential mean
  Duration latency_max{0};   // uniform high bound
  uint32_t bits = 1;         // bit flips per call (flip_read_bits, corrupt_write)
  double bit_rate = 0;       // or a per-bit flip probability (overrides bits when > 0)
  std::optional<uint64_t> bytes;  // short read/write length, torn prefix (default: drawn)
  int64_t shift = 0;         // misdirected write offset delta (0: one call's size)
  uint64_t length = 0;       // bad range length (0: the call's size)
  bool dir_sync = false;     // drop_unsynced: a created file survives a crash only once its
                             // directory was fsynced (POSIX); default: its own fsync is enough
  std::string source;        // misdirected read: glob of the files a read may be served from
                             // (empty: the rule's own path glob)
};

nlohmann::json RuleToJson(const Rule& rule);

// Errno names a rule may use. ENOSYS is refused: for fsync, flush, fallocate and xattr calls the
// kernel would stop sending the operation for the rest of the mount.
std::optional<int> ErrnoFromName(std::string_view name);
std::string ErrnoName(int err);
// The names accepted, comma separated, for error messages.
std::string ErrnoNames();

}  // namespace kvchaos::faultfs
