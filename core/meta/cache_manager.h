// CacheManager: the data plane of the meta service (read-write-data-integrity.md, plan A).
//
//   StartWriteCache(keys)             -> a write session: for each key a location to write, or
//                                        "already cached" (nothing to write)
//   FinishWriteCache(session, keys, checksums, iov_layouts)
//                                     -> the locations become serving, with the writer's checksums
//                                        and the IOV layouts they were computed over
//   GetCacheLocation(keys)            -> serving locations with their checksums (for verification)
//   RemoveCache(keys)
//
// Entries are kept in the MetaIndexer under `cache:<key>` (field `locations`: a JSON array of
// CacheLocation, one per storage). When a key has locations on several storages the first serving
// one in stored order wins, and the merged answer carries the winner's checksum and layout (never
// those of another copy). Every write carries the fencing token set by the service when it became
// leader (SetFencingToken), so a deposed leader's late writes are rejected by the indexer, and is
// conditional on the record it read (meta_indexer.h: a write id per write, expected id = the one
// read), so a late attempt of an index write cannot undo a later write of the same term: it is a
// Conflict, returned to the caller, who asks again.
//
// A location's id inside a posix store is a 16-byte block id derived from the key (two
// independent 64-bit hashes), written as 32 hex characters.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/common/runtime.h"
#include "core/meta/cache_location.h"
#include "core/meta/meta_indexer.h"
#include "core/meta/parsed_entries.h"
#include "core/meta/storage_registry.h"

namespace kvchaos::meta {

struct WriteSession {
  std::string session_id;
  uint64_t fencing_token = 0;          // the term it was opened, and its index write fenced, under
  std::string storage;                 // where the blocks go
  std::vector<std::string> keys;       // as requested
  std::vector<CacheLocation> locations;  // per key: where to write it (status writing)
  std::vector<uint8_t> to_write;       // per key: 1 = write it, 0 = already cached (skip)
  integrity::DataIntegrityConfig integrity;  // of the storage, so the client knows what to compute
};

class CacheManager {
 public:
  static constexpr std::string_view kKeyPrefix = "cache:";

  // `runtime` provides the lock held across indexer calls (they may wait on a network: in the
  // simulator that wait is a scheduling point, so the lock must be the runtime's). `parsed`: the
  // entries parsed before, shared with the managers of earlier terms (it must outlive this one);
  // null: a cache of this manager's own.
  CacheManager(MetaIndexer& indexer, StorageRegistry& registry, Runtime& runtime = Runtime::Real(),
               ParsedEntries* parsed = nullptr)
      : indexer_(indexer),
        registry_(registry),
        rmw_mu_(runtime),
        own_parsed_(parsed ? nullptr : std::make_unique<ParsedEntries>()),
        parsed_(parsed ? *parsed : *own_parsed_) {}

  // The token every later write carries (the leader's fencing token).
  void SetFencingToken(uint64_t token) { fencing_token_.store(token); }
  uint64_t fencing_token() const { return fencing_token_.load(); }
  // Whether this manager is the only one issuing write ids under its token (a node's term: each
  // serving term has a token of its own), so its ids order its writes and RemoveCache deletes in
  // that order (WrittenAfter, fence.h). Off by default: a manager whose token others share (the
  // in-process meta of successive CLI processes, each counting from 1) deletes unordered.
  void SetSoleIssuerOfToken(bool sole) { sole_issuer_ = sole; }

  // `storage` empty: the only registered storage (InvalidArgument when there are several).
  // `request_id`: the client's id of this request, the same on every retry of it (empty: none).
  // A copy of a request this manager already answered (delivered late, after its own retry, or
  // twice) gets that session again and changes nothing, instead of taking its locations over.
  Result<WriteSession> StartWriteCache(std::span<const std::string> keys, const std::string& storage = "",
                                       const std::string& request_id = "");

  // Commits the session's locations. `checksums` is empty (an old client: keep what the
  // locations already carry) or one per key; `checksum_present` is empty (all present) or one
  // flag per key. `iov_layouts` likewise: empty keeps what the locations carry, else one per key
  // (an unknown layout stores none). A length mismatch is InvalidArgument and changes nothing.
  // Keys of the session that were already cached are ignored. `inline_header_version`: the
  // version of the inline header the writer wrote with every block of the call (0: none); kept
  // per location, so each block is read by what it is.
  Status FinishWriteCache(const std::string& session_id, std::span<const std::string> keys,
                          std::span<const int64_t> checksums = {}, std::span<const uint8_t> checksum_present = {},
                          std::span<const IovLayout> iov_layouts = {}, int64_t inline_header_version = 0);

  // Per key: the winning serving location, or nullopt (not cached or still being written).
  Result<std::vector<std::optional<CacheLocation>>> GetCacheLocation(std::span<const std::string> keys);

  Status RemoveCache(std::span<const std::string> keys);

  // 32 hex characters of the block id used for `key`.
  static std::string BlockIdHexForKey(std::string_view key);

 private:
  // The entries of `keys`; with `write_ids`, also the write id each record carries ("" for none).
  Result<std::vector<std::vector<CacheLocation>>> LoadEntries(std::span<const std::string> keys,
                                                              std::vector<std::string>* write_ids = nullptr);
  static std::string WriteIdOf(const std::optional<MetaRecord>& record);
  // A write id no other write of any term uses (the token names the term, the counter the write).
  std::string NextWriteId(uint64_t fencing_token);
  static MetaRecord EntryRecord(const std::vector<CacheLocation>& locations);
  // Keeps the entries a Put just wrote (writes[i] holds *locations[i]), so the next read of an
  // entry this node wrote does not parse it again.
  void KeepWritten(std::span<const MetaWrite> writes, std::span<const std::vector<CacheLocation>* const> locations);

  // A StartWriteCache answered, remembered by its request id.
  struct AnsweredStart {
    std::string session_id;
    uint64_t fencing_token = 0;
    std::string storage;
    uint64_t keys_hash = 0;  // of the keys in order: an id reused for other keys is a new request
  };
  static constexpr size_t kAnsweredMax = 16384;
  static constexpr size_t kRequestIdMaxBytes = 128;
  // The session `answered` made, as it stands in `entries` now: a key whose location on the
  // storage serves needs no write; every other key is written under the session (if another
  // writer took it over meanwhile, FinishWriteCache says so, as it would have anyway).
  static WriteSession SessionAgain(const AnsweredStart& answered, std::span<const std::string> keys,
                                   const StorageConfig& config, const std::vector<std::vector<CacheLocation>>& entries);
  void Remember(const std::string& request_id, AnsweredStart answered) REQUIRES(rmw_mu_);

  MetaIndexer& indexer_;
  StorageRegistry& registry_;
  // Serialises the read-modify-write of entries (Start, Finish), so two writers of one key on
  // different storages cannot drop each other's location. Held across the indexer call: the
  // indexer is the only thing these paths wait for, and it never calls back.
  Mutex rmw_mu_;
  std::atomic<uint64_t> fencing_token_{0};
  std::atomic<uint64_t> next_session_{1};  // numbers sessions and write ids
  bool sole_issuer_ = false;
  // The last kAnsweredMax answered StartWriteCache requests that carried an id, oldest first out.
  std::unordered_map<std::string, AnsweredStart> answered_ GUARDED_BY(rmw_mu_);
  std::deque<std::string> answered_order_ GUARDED_BY(rmw_mu_);

  std::unique_ptr<ParsedEntries> own_parsed_;  // when no shared one was given
  ParsedEntries& parsed_;
};

}  // namespace kvchaos::meta
