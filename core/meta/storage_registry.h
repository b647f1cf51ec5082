// StorageRegistry: the storages the meta service knows, persisted in the meta index under
// `storage:<name>` (field `config`, the StorageConfig JSON).
//
// Every config is validated before it is stored (AddStorage) and again when it is read back
// (Recover): a half-valid config that slipped into the index (an older version, a hand edit) is
// skipped and counted, never loaded, so the service and its clients never disagree about whether
// a storage may be used (read-write-data-integrity.md, "four lines of defence").
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/meta/meta_indexer.h"
#include "core/meta/storage_config.h"

namespace kvchaos::meta {

class StorageRegistry {
 public:
  static constexpr std::string_view kKeyPrefix = "storage:";

  explicit StorageRegistry(MetaIndexer& indexer) : indexer_(indexer) {}

  // Validates and persists; AlreadyExists when the name is taken with a different config
  // (re-adding the same config is a no-op).
  Status AddStorage(const StorageConfig& config, uint64_t fencing_token);
  Status RemoveStorage(const std::string& name, uint64_t fencing_token);

  // Replaces the in-memory view with what the index holds. Returns how many were loaded;
  // invalid entries are skipped, logged and counted in recover_error_count().
  Result<size_t> Recover();
  size_t recover_error_count() const;

  std::optional<StorageConfig> Get(const std::string& name) const;
  // Sorted by name.
  std::vector<StorageConfig> List() const;

 private:
  MetaIndexer& indexer_;
  mutable std::mutex mu_;
  std::map<std::string, StorageConfig> storages_;
  size_t recover_errors_ = 0;
};

}  // namespace kvchaos::meta
