// RebuildIndex: recreates the meta-index entries of a storage's blocks from the blocks themselves.
// A storage with inline headers on (docs/inline-header.md) has every block name its key, data
// length, checksum with its algorithm and the IOV layout that checksum binds, so an index that lost
// entries (its Redis wiped, a file index restored from an old copy) can be filled in again from the
// storage alone. `kvchaos integrity rebuild` is its command line; the doc's "Rebuilding the index"
// section is the operator's view.
//
// What it does, in order:
//   1. refuses a storage whose config has inline headers off (its blocks do not say whose they are);
//   2. lists every shard directory of every backend path; a block id found on several paths (mounts
//      of one file system, or copies) is read once, from the first path of its route (the file a
//      Load reads), temp files and other names are counted and left alone;
//   3. reads each block file's header (its last 4096 bytes) and sorts the file into one verdict:
//      a header that does not decode is BADHEADER, a file of another length than its header says
//      TORN, a block whose key's block id is not its file name (or that sits in another shard
//      directory) MISPLACED — none of those is ever indexed;
//   4. batch by batch, asks meta for the keys' serving entries: a key without one gets an entry
//      (REBUILT); one whose entry names this block with the same checksum is left alone (AGREED);
//      any other entry is a CONFLICT, reported with both sides and never overwritten.
//
// Entries are written with StartWrite + FinishWrite of the MetaClient, the calls a Save publishes a
// block with, not by writing the index directly: the index's fence applies (an in-process meta
// writes under the newest token its index has seen; a cluster's calls go to the leader, which
// fences them with its term), so a rebuild can never overwrite what a newer leader wrote, and a
// concurrent Save of the same key meets a session exactly as it would meet another client's.
// Files are read through store::FileOps (no health samples: this is not business I/O).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/client/meta_client.h"
#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/store/block_id.h"
#include "core/store/file_ops.h"

namespace kvchaos::client {

enum class RebuildVerdict : uint8_t {
  kRebuilt,      // the key had no serving entry: one was written (or would be, in a dry run)
  kAgreed,       // the key's serving entry names this block with the same checksum and layout
  kConflict,     // the key's serving entry names another location, checksum or layout: left alone
  kBadHeader,    // the header does not decode (magic, version, size, its own checksum) or names
                 // a key no client could have written (empty, not UTF-8)
  kTorn,         // the file's length is not what its header says, or it is too short for one
  kNoHeader,     // exactly block_size bytes: written before headers were on, or cut at its header
  kMisplaced,    // the key's block id is not the file's name, or the file is in another shard dir
  kKeyUnknown,   // the header keeps only the key's length and hash, and no listed key matches
  kAlgoMismatch, // the header's checksum algorithm is not the storage's: an entry would mislabel it
  kIoError,      // the file could not be read (stat, open or read failed)
  kMissing,      // a listed key (IndexRebuildOptions::keys) with no block on the storage
};

// "REBUILT", "AGREED", "CONFLICT", "BADHEADER", "TORN", "NOHEADER", "MISPLACED", "KEYUNKNOWN",
// "BADALGO", "IOERROR", "MISSING": the word that starts the finding's line.
std::string_view RebuildVerdictName(RebuildVerdict verdict);

struct RebuildFinding {
  RebuildVerdict verdict = RebuildVerdict::kRebuilt;
  std::string key;     // empty when the file does not say (a damaged header)
  std::string path;    // the block file; empty for kMissing
  std::string detail;  // why; for a conflict both sides (the entry and the block)
};

// "VERDICT key=K file=F (detail)", as the command line prints it.
std::string FindingLine(const RebuildFinding& finding);

struct IndexRebuildOptions {
  std::string storage;                // the storage's global_unique_name in meta
  std::vector<std::string> backends;  // every backend path of the storage, in route order
  uint64_t block_size = 0;            // the store's block_size (a headed file is this + 4096 bytes)
  int shard_width = store::kDefaultShardWidth;  // the store's data_dir_shard_bytes
  bool dry_run = false;               // decide and report everything, write nothing
  // Only blocks of these keys are rebuilt (the others are counted, left alone); a key that is too
  // long to be stored in its header is recognised by length and hash. nullopt: every block.
  std::optional<std::vector<std::string>> keys;
  size_t batch = 512;  // keys per meta call (a node takes up to http_max_keys_per_call)
  store::FileOps* file_ops = &store::FileOps::Real();
  // The sorted entry names of a directory; NotFound when it does not exist (read as empty).
  // Default: opendir/readdir.
  std::function<Result<std::vector<std::string>>(const std::string& dir)> list_dir;
  Runtime* runtime = &Runtime::Real();  // for the elapsed time only
  // Called with each finding as it is made (every verdict but kAgreed), in scan order.
  std::function<void(const RebuildFinding&)> on_finding;
};

struct IndexRebuildReport {
  uint64_t scanned = 0;  // block files whose header was read (each block id once)
  uint64_t rebuilt = 0;
  uint64_t agreed = 0;
  uint64_t conflicts = 0;
  uint64_t skipped = 0;  // BADHEADER, TORN, NOHEADER, MISPLACED, KEYUNKNOWN, BADALGO, IOERROR
  uint64_t bad_header = 0, torn = 0, no_header = 0, misplaced = 0, key_unknown = 0, algo_mismatch = 0,
           io_errors = 0;
  uint64_t not_listed = 0;     // blocks of keys that IndexRebuildOptions::keys does not list
  uint64_t missing = 0;        // listed keys without a block
  uint64_t copies = 0;         // further paths holding a block id already read on its route
  uint64_t ignored_files = 0;  // temp files, probe files, names that are no block id
  uint64_t vanished = 0;       // listed, then gone before they were read (evicted meanwhile)
  bool dry_run = false;
  Duration elapsed{0};
  std::vector<RebuildFinding> findings;  // every verdict but kAgreed, in scan order

  // Nothing conflicting, damaged or left unindexed: every block found is in the index.
  bool clean() const { return conflicts == 0 && skipped == 0; }
  double blocks_per_second() const;
  // "scanned N blocks in X s (B blocks/s), rebuilt R, agreed A, conflicts C, skipped S"
  std::string Summary() const;
};

// Runs a rebuild (see the file comment). InvalidArgument for options that cannot be (no backend, a
// zero block size or batch) and for a storage with inline headers off; the meta client's error
// when the storage is not registered or a meta call fails (then nothing of the failed batch was
// committed and the error says how many entries were rebuilt before it); IoError when a backend's
// directory cannot be listed. Damaged files never fail the run: they are findings.
Result<IndexRebuildReport> RebuildIndex(MetaClient& meta, const IndexRebuildOptions& options);

}  // namespace kvchaos::client
