// History: one record per client operation of a run (meta calls and end-to-end Save/Load), with
// its invoke and complete times on the run's clock (true time in the simulator, one monotonic
// clock in real mode) and its outcome, so a checker (sim/linearizability.h) can search for an order
// that explains them all. A batch call over several keys becomes one record per key: the checker
// works key by key.
//
// Outcomes: ok (the answer came back, it applied), failed (a definite answer that it did not
// apply), unknown (a timeout or lost reply: it may have applied at any point after its invoke, or
// never). Written and read as JSON lines, one record a line (docs/history.md).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos::sim {

enum class HistoryOp : uint8_t {
  kStartWrite,   // StartWriteCache
  kFinishWrite,  // FinishWriteCache
  kGetLocation,  // GetCacheLocation
  kRemove,       // RemoveCache
  kSave,         // TransferClient::Save (end to end)
  kLoad,         // TransferClient::Load (end to end)
};
// "start_write", "finish_write", "get_location", "remove", "save", "load".
const char* HistoryOpName(HistoryOp op);
Result<HistoryOp> ParseHistoryOp(std::string_view text);

enum class HistoryOutcome : uint8_t { kOk, kFailed, kUnknown };
// "ok", "failed", "unknown".
const char* HistoryOutcomeName(HistoryOutcome outcome);
Result<HistoryOutcome> ParseHistoryOutcome(std::string_view text);

struct HistoryRecord {
  uint64_t id = 0;      // order in which the recorder filed it (completion order)
  std::string client;   // who called ("data0", "meta1", ...)
  HistoryOp op = HistoryOp::kGetLocation;
  std::string key;
  HistoryOutcome outcome = HistoryOutcome::kOk;
  std::string error;    // status of a failed or unknown call ("Timeout: ..."), empty when ok
  int64_t invoke_ns = 0;
  int64_t complete_ns = 0;  // when the answer (or the give-up) came
  // The value written or read, as the API takes or returns it:
  //  start_write: `session` returned; `found` = the key was already cached (nothing to write), with
  //               its serving location's storage/location/checksum;
  //  finish_write: `session` committed and the `checksum` sent (nullopt: none sent);
  //  get_location: `found` = a serving location came back, with storage/location/checksum;
  //  save/load: `version` of the workload's block (-1: none).
  bool found = false;
  std::string storage;
  std::string location;
  std::string session;
  std::optional<int64_t> checksum;
  int64_t version = -1;
  std::string node;   // the node that served it ("n2", "node-2"), when known ("" otherwise)
  int64_t term = -1;  // the leader term (fencing token) that served it, when known

  friend bool operator==(const HistoryRecord&, const HistoryRecord&) = default;
};

// The term a write session id names: "ws-<token>-<n>" -> token; -1 for any other shape.
int64_t TermOfSession(std::string_view session_id);

// Collects finished records from any thread; NowNs() is the clock callers stamp invoke and
// complete times with (the runtime given here: true time in the simulator). Its stamps strictly
// increase (a stamp equal to the last is moved on by 1 ns): two events never share a time, so a
// call made the instant the previous one returned (no time passes in simulated code) stays after
// it, and a return stamped before an invoke really happened before it.
class HistoryRecorder {
 public:
  // `now_ns`: the clock of the history (the simulator passes its true time); empty: runtime.Now().
  explicit HistoryRecorder(Runtime& runtime, std::function<int64_t()> now_ns = {})
      : runtime_(runtime), now_ns_(std::move(now_ns)), mu_(runtime) {}

  int64_t NowNs() const;
  // Files a finished record; `record.id` is assigned here.
  void Add(HistoryRecord record);
  // All records so far, sorted by invoke time (then id).
  std::vector<HistoryRecord> Records() const;
  // The same, moved out: the recorder is left empty (a run's checks, once it is over, need no
  // copy of some 10^5 records and their strings).
  std::vector<HistoryRecord> TakeRecords();
  size_t size() const;

 private:
  Runtime& runtime_;
  const std::function<int64_t()> now_ns_;
  mutable Mutex mu_;
  mutable int64_t last_stamp_ GUARDED_BY(mu_) = std::numeric_limits<int64_t>::min();
  uint64_t next_id_ GUARDED_BY(mu_) = 0;
  // A deque: a run files some 10^5 records; a vector's growth moved them all again and again.
  std::deque<HistoryRecord> records_ GUARDED_BY(mu_);
};

// One JSON object per record, in this order of fields; ToJsonLine has no trailing newline.
std::string ToJsonLine(const HistoryRecord& record);
// `where` names the source in messages ("history.jsonl:12").
Result<HistoryRecord> HistoryRecordFromJsonLine(std::string_view line, const std::string& where);

Status WriteHistory(const std::vector<HistoryRecord>& records, const std::string& path);
// Blank lines are skipped; a bad line is an error naming the file, line and field.
Result<std::vector<HistoryRecord>> ReadHistory(const std::string& path);

}  // namespace kvchaos::sim
