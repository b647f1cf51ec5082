// MetaIndexer: the persistent key -> record store under the meta service (cache locations, the
// storage registry). A record is a small map of named string fields (one Redis hash per key).
//
// Fencing (ha-leader-election.md, beyond upstream): every write carries the fencing token of the
// leader that issues it. The indexer remembers the newest token it has seen and rejects, with
// StaleFencingToken and without changing anything, a write whose token is older. So a paused
// leader that wakes up after a new leader was elected cannot overwrite the new leader's records.
// Equal tokens are accepted (the same leader writing again); a newer one becomes the newest.
// A new leader raises the fence to its token with RaiseFence() before it serves (MetaNode's
// recovery), so the old term's writes are refused from then on, not only after the new leader's
// first write; it reads NewestFencingToken() first, to make its token newer than anything seen
// even when the coordination backend lost its counter (leader_elector.h, "fencing floor").
//
// Backends: "memory://" and "local:///path/to/file.json" (LocalMetaIndexer), and
// "redis://[auth@]host:port/?db=N&timeout_ms=..&retry_count=..&prefix=.." (RedisMetaIndexer).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/common/utf8.h"

namespace kvchaos::meta {

// Field name -> value. Ordered, so iteration (and anything derived from it) is deterministic.
using MetaRecord = std::map<std::string, std::string>;

// Conditional writes (compare-and-set). Fencing orders the writes of different terms, not the
// writes within one: a retried write whose first attempt was only slow can land after a later
// write of the same key and undo it (a block acknowledged "serving" goes back to "writing"). So a
// read-modify-write names a `write_id`, unique to that write and the same on every attempt of it,
// and `expected_write_id`, the id of the record it read ("" = no record, or one written without
// an id). The index stores the id in the record's field kWriteIdField and, per key:
//   - applies the write when the record's id is `expected_write_id`;
//   - counts it done, changing nothing, when the record already carries `write_id` (an attempt
//     delivered again, after another attempt of it was applied);
//   - refuses the whole call with Conflict, changing nothing, for any other record.
// The rule is CheckWriteId in core/meta/fence.h; an empty `write_id` writes unconditionally.
inline constexpr std::string_view kWriteIdField = "write_id";

struct MetaWrite {
  std::string key;
  MetaRecord record;  // replaces the whole record of `key`; must not be empty
  std::string write_id;           // "": unconditional
  std::string expected_write_id;  // with a write_id: the id of the record read ("" = none)
};

class MetaIndexer {
 public:
  virtual ~MetaIndexer() = default;

  // "memory://", "local:///var/lib/kvchaos/meta.json", "redis://127.0.0.1:6379" (no secrets).
  virtual std::string Describe() const = 0;

  // Replaces the records of all `writes`, after the fencing check.
  virtual Status Put(uint64_t fencing_token, std::span<const MetaWrite> writes) = 0;
  // Deletes records (absent keys are fine), after the fencing check. `expected_write_ids` empty:
  // unconditionally; else one per key: a record whose write id is not the expected one is kept
  // and the call is Conflict (CheckDeleteWriteId), so a late attempt cannot delete a newer record.
  // Or `delete_id`, the delete's own write id: records written after it was issued are kept and
  // the rest deleted, and the call is OK (WrittenAfter, fence.h); no read is needed first.
  virtual Status Delete(uint64_t fencing_token, std::span<const std::string> keys,
                        std::span<const std::string> expected_write_ids = {}, std::string_view delete_id = {}) = 0;
  // One entry per key, nullopt where there is no record.
  virtual Result<std::vector<std::optional<MetaRecord>>> Get(std::span<const std::string> keys) = 0;
  // Keys starting with `prefix`, sorted.
  virtual Result<std::vector<std::string>> ListKeys(std::string_view prefix) = 0;
  // The newest fencing token seen by any write or RaiseFence (0 before the first).
  virtual Result<uint64_t> NewestFencingToken() = 0;
  // Raises the fence to `fencing_token` (newest = max(newest, token)) without writing a record,
  // atomically with the check; durable like a write. StaleFencingToken (nothing changed) when the
  // newest token seen is already newer; OK when it is equal.
  virtual Status RaiseFence(uint64_t fencing_token) = 0;
};

// Keys, fields and values of the local indexer are stored as JSON text, which must be UTF-8, so
// the meta layer rejects anything else up front (the same on every backend) instead of failing
// later; the check lives in core/common/utf8.h.
using ::kvchaos::IsValidUtf8;

// Opens an indexer from its URI (forms above). InvalidConfig names the part of the URI that is
// wrong; Unavailable/IoError when the backend cannot be reached or its file cannot be read.
Result<std::unique_ptr<MetaIndexer>> OpenMetaIndexer(std::string_view uri);

}  // namespace kvchaos::meta
