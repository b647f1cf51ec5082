// Store: the block store interface the rest of kvchaos programs against (the client's
// TransferClient, the CLI, the harness). PosixStore implements it; HealthBreakerStore wraps any
// Store with the outer health breaker.
//
// A transfer task is a list of shards. A shard is one slice of a block — shard `index` of a block
// lives at offset index × shard_size of the block's file — given as buffers whose sizes add up to
// shard_size. Dump writes shards into the block's `.tmp` file and makes the block visible (renames
// it) once the task has written its shards and contains the block's last shard; Load reads them.
// Buffers belong to the caller and must stay valid until Wait returns; the store never touches
// them after that, even when an attempt it gave up on completes later.
//
// A task may say its blocks carry an inline header (TransferTask::inline_header; the format is the
// client's, docs/inline-header.md): such a block has one more shard, index shards_per_block, of
// kInlineHeaderBytes at offset block_size (still aligned for direct I/O), and that shard is its
// last: the task holding it commits the block. Data and header may come in one task, or the data
// first and the header in a later one (the data's task then commits nothing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/common/status.h"
#include "core/store/block_id.h"

namespace kvchaos::store {

struct Shard {
  BlockId block;
  uint32_t index = 0;
  std::vector<std::span<std::byte>> buffers;
};

// The size of a block's inline header region (one direct-I/O alignment unit).
inline constexpr uint64_t kInlineHeaderBytes = 4096;

struct TransferTask {
  std::vector<Shard> shards;
  bool inline_header = false;  // every block of the task has an inline header (see above)
};

using TaskHandle = uint64_t;

// How a store cuts blocks: a block is block_size bytes in block_size / shard_size shards. A client
// (TransferClient) takes its sizes from here, so they are written in one place: the store's config.
struct BlockGeometry {
  uint64_t block_size = 0;
  uint64_t shard_size = 0;
};

// What a store can say for sure about a block, once a read of it missed: whether the index that
// lists it should keep promising it (TransferClient drops the entries of lost blocks).
enum class BlockPresence : uint8_t {
  kUnknown,  // the store cannot tell now (its path is unavailable, a check failed): keep the entry
  kPresent,  // a whole block file is there
  kLost,     // its file is missing or shorter than a whole block (with its inline header, if it
             // has one) where the store reads it first
};

class Store {
 public:
  virtual ~Store() = default;

  // Per id: true when the block is stored (committed). StoreUnhealthy when no backend is available.
  virtual Result<std::vector<bool>> Lookup(std::span<const BlockId> ids) = 0;
  virtual Result<TaskHandle> Dump(TransferTask task) = 0;
  virtual Result<TaskHandle> Load(TransferTask task) = 0;
  // Waits for a task; OK or the first failure with its real code (NotFound for a missing block on
  // load, IoError, Timeout, StoreUnhealthy, …). Each handle can be waited for once.
  virtual Status Wait(TaskHandle handle) = 0;
  // OK while at least one backend is available, else StoreUnhealthy. Never does I/O.
  virtual Status CheckHealth() = 0;
  // Removes blocks; missing blocks are not an error.
  virtual Status Remove(std::span<const BlockId> ids) = 0;
  // The caller gives up blocks whose data it dumped without their last shard (which was to come in
  // a later task, as an inline header does): their uncommitted temp files are removed.
  virtual void Abandon(std::span<const BlockId> ids) { (void)ids; }
  // Per id. Never kLost for a block the store might still return; a store that cannot tell
  // answers kUnknown for every block (the default). `inline_header`, when given, says per id
  // (nonzero) that the block carries an inline header, which a whole file then holds too.
  virtual Result<std::vector<BlockPresence>> Presence(std::span<const BlockId> ids,
                                                      std::span<const uint8_t> inline_header = {}) {
    (void)inline_header;
    return std::vector<BlockPresence>(ids.size(), BlockPresence::kUnknown);
  }
  // The store's block and shard sizes; nullopt when it cannot say (not set up yet, or a store
  // without fixed sizes), and then a client must be told them.
  virtual std::optional<BlockGeometry> Geometry() const { return std::nullopt; }
  // How many transfers the store runs at once (its I/O workers, or its queue depth); clients size
  // their own parallelism by it (TransferClient's checksum threads). 1 when it cannot say.
  virtual int Concurrency() const { return 1; }
};

}  // namespace kvchaos::store
