// LocalMetaIndexer: records in memory, optionally persisted to one JSON file so a restart
// recovers them. Every mutation rewrites the file as `<file>.tmp`, fsyncs it and renames it over
// the old one (then fsyncs the directory): a crash leaves the old or the new state, never a torn
// file. Meant for a single node and for tests; the file is rewritten whole, so it suits indexes of
// up to some hundred thousand records.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "core/meta/meta_indexer.h"

namespace kvchaos::meta {

class LocalMetaIndexer final : public MetaIndexer {
 public:
  // A bug the simulator plants to prove its checkers catch it. Off in production.
  struct TestingKnobs {
    bool skip_fence_check = false;  // every token passes the fence (the newest still moves up)
  };

  // In memory only.
  LocalMetaIndexer() = default;
  explicit LocalMetaIndexer(TestingKnobs knobs) : knobs_(knobs) {}
  // Persisted to `path`; loads it when it exists. A file that exists but cannot be parsed is an
  // error naming the file (never an empty index: that would silently drop every record).
  static Result<std::unique_ptr<LocalMetaIndexer>> Open(const std::string& path);

  std::string Describe() const override;
  Status Put(uint64_t fencing_token, std::span<const MetaWrite> writes) override;
  Status Delete(uint64_t fencing_token, std::span<const std::string> keys,
                std::span<const std::string> expected_write_ids = {}, std::string_view delete_id = {}) override;
  Result<std::vector<std::optional<MetaRecord>>> Get(std::span<const std::string> keys) override;
  Result<std::vector<std::string>> ListKeys(std::string_view prefix) override;
  Result<uint64_t> NewestFencingToken() override;
  Status RaiseFence(uint64_t fencing_token) override;

 private:
  // The newest token after a write with `fencing_token` (core/meta/fence.h), or StaleFencingToken.
  Result<uint64_t> Fence(uint64_t fencing_token) const;
  // The write id `key`'s record carries ("" for none, or no record).
  std::string_view WriteIdOf(const std::string& key, bool* present = nullptr) const;
  // Writes the records as they will be once `puts` and `deletes` are applied, and `token`, to the
  // file (if any). Called with mu_ held, before the in-memory state changes, so a failed save
  // leaves memory and file as they were; an index in memory changes in place, never copied.
  Status Save(std::span<const MetaWrite> puts, std::span<const std::string> deletes, uint64_t token) const;

  TestingKnobs knobs_;
  std::string path_;  // empty: memory only
  mutable std::mutex mu_;
  // Hashed: Get, Put and Delete look keys up one by one (every read and commit of a node: a tree
  // of thousands of "cache:..." keys compared their common prefix at every level). Only ListKeys
  // wants an order, and sorts what it found; it runs when a node recovers its storage registry
  // (each promotion), not on the write path.
  std::unordered_map<std::string, MetaRecord> records_;
  uint64_t newest_token_ = 0;
};

}  // namespace kvchaos::meta
