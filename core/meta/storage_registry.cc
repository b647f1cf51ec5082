// StorageRegistry: validated storage configs over the meta index.
#include "core/meta/storage_registry.h"

#include <spdlog/spdlog.h>

#include "core/common/json_text.h"

namespace kvchaos::meta {

Status StorageRegistry::AddStorage(const StorageConfig& config, uint64_t fencing_token) {
  KVCHAOS_RETURN_IF_ERROR(config.Validate());
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = storages_.find(config.global_unique_name);
    if (it != storages_.end()) {
      if (it->second == config) return Status::Ok();
      return Status(StatusCode::kAlreadyExists,
                    "storage '" + config.global_unique_name + "' is already registered with another config");
    }
  }
  std::string text;
  try {
    text = DumpJson(config.ToJson());
  } catch (const nlohmann::json::exception& e) {
    // Only configs built in code can get here (parsed ones are valid JSON text already).
    return Status::InvalidConfig("storage '" + config.global_unique_name + "': cannot be stored as JSON: " + e.what());
  }
  const MetaWrite write{std::string(kKeyPrefix) + config.global_unique_name, {{"config", text}}};
  KVCHAOS_RETURN_IF_ERROR(indexer_.Put(fencing_token, std::span(&write, 1)));
  std::lock_guard<std::mutex> lock(mu_);
  storages_[config.global_unique_name] = config;
  return Status::Ok();
}

Status StorageRegistry::RemoveStorage(const std::string& name, uint64_t fencing_token) {
  const std::string key = std::string(kKeyPrefix) + name;
  KVCHAOS_RETURN_IF_ERROR(indexer_.Delete(fencing_token, std::span(&key, 1)));
  std::lock_guard<std::mutex> lock(mu_);
  storages_.erase(name);
  return Status::Ok();
}

Result<size_t> StorageRegistry::Recover() {
  Result<std::vector<std::string>> keys = indexer_.ListKeys(kKeyPrefix);
  if (!keys.ok()) return keys.status();
  Result<std::vector<std::optional<MetaRecord>>> records = indexer_.Get(*keys);
  if (!records.ok()) return records.status();
  std::map<std::string, StorageConfig> loaded;
  size_t errors = 0;
  for (size_t i = 0; i < keys->size(); ++i) {
    const std::string& key = (*keys)[i];
    const std::optional<MetaRecord>& record = (*records)[i];
    if (!record) continue;  // removed between list and get
    auto field = record->find("config");
    Status problem;
    if (field == record->end()) {
      problem = Status::InvalidConfig("no 'config' field");
    } else {
      Result<StorageConfig> config = StorageConfig::FromJsonString(field->second);
      if (config.ok()) problem = config->Validate();
      if (!config.ok()) problem = config.status();
      if (problem.ok() && std::string(kKeyPrefix) + config->global_unique_name != key) {
        problem = Status::InvalidConfig("name '" + config->global_unique_name + "' does not match the key");
      }
      if (problem.ok()) loaded[config->global_unique_name] = *config;
    }
    if (!problem.ok()) {
      ++errors;
      spdlog::error("storage registry: skipping invalid entry '{}' in {}: {}", key, indexer_.Describe(),
                    problem.ToString());
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  storages_ = std::move(loaded);
  recover_errors_ += errors;
  return storages_.size();
}

size_t StorageRegistry::recover_error_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return recover_errors_;
}

std::optional<StorageConfig> StorageRegistry::Get(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = storages_.find(name);
  if (it == storages_.end()) return std::nullopt;
  return it->second;
}

std::vector<StorageConfig> StorageRegistry::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StorageConfig> out;
  for (const auto& [name, config] : storages_) out.push_back(config);
  return out;
}

}  // namespace kvchaos::meta
