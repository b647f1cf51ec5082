// LocalMetaIndexer: in-memory map + atomic-rename JSON file (see the header).
#include "core/meta/local_meta_indexer.h"

#include "core/meta/fence.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/common/json_text.h"

namespace kvchaos::meta {
namespace {

constexpr int kFileVersion = 1;

Status WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError("meta index: write('" + path + "') failed", errno);
    }
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status FsyncDir(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("meta index: open directory '" + dir + "' failed", errno);
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  if (rc != 0) return Status::IoError("meta index: fsync directory '" + dir + "' failed", err);
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<LocalMetaIndexer>> LocalMetaIndexer::Open(const std::string& path) {
  auto indexer = std::make_unique<LocalMetaIndexer>();
  indexer->path_ = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
      return Status::InvalidConfig("meta index file '" + path + "': directory '" + parent.string() +
                                   "' does not exist");
    }
    return indexer;
  }
  std::ifstream in(path);
  if (!in) return Status::IoError("meta index: cannot open '" + path + "'", errno);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  auto corrupt = [&](const std::string& why) {
    return Status::InvalidConfig("meta index file '" + path + "' is not a kvchaos meta index: " + why +
                                 " (refusing to start empty; move the file away to start over)");
  };
  if (j.is_discarded() || !j.is_object()) return corrupt("not a JSON object");
  if (j.value("version", 0) != kFileVersion) return corrupt("unknown or missing version");
  if (!j.contains("fencing_token") || !j["fencing_token"].is_number_unsigned()) return corrupt("bad fencing_token");
  if (!j.contains("records") || !j["records"].is_object()) return corrupt("bad records");
  indexer->newest_token_ = j["fencing_token"].get<uint64_t>();
  for (const auto& [key, fields] : j["records"].items()) {
    if (!fields.is_object()) return corrupt("record '" + key + "' is not an object");
    MetaRecord record;
    for (const auto& [field, value] : fields.items()) {
      if (!value.is_string()) return corrupt("record '" + key + "' field '" + field + "' is not a string");
      record[field] = value.get<std::string>();
    }
    indexer->records_[key] = std::move(record);
  }
  return indexer;
}

std::string LocalMetaIndexer::Describe() const { return path_.empty() ? "memory://" : "local://" + path_; }

Result<uint64_t> LocalMetaIndexer::Fence(uint64_t fencing_token) const {
  const FenceVerdict verdict = CheckFence(newest_token_, fencing_token);
  if (knobs_.skip_fence_check) return std::max(newest_token_, fencing_token);
  if (!verdict.accepted) return StaleFencingToken("meta index " + Describe(), fencing_token, newest_token_);
  return verdict.newest;
}

Status LocalMetaIndexer::Save(std::span<const MetaWrite> puts, std::span<const std::string> deletes,
                              uint64_t token) const {
  if (path_.empty()) return Status::Ok();
  nlohmann::json j{{"version", kFileVersion}, {"fencing_token", token}, {"records", nlohmann::json::object()}};
  nlohmann::json& records = j["records"];
  for (const auto& [key, record] : records_) records[key] = record;
  for (const std::string& key : deletes) records.erase(key);
  for (const MetaWrite& w : puts) records[w.key] = w.record;
  const std::string data = DumpJson(j);
  const std::string tmp = path_ + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("meta index: open('" + tmp + "') failed", errno);
  Status s = WriteAll(fd, data, tmp);
  if (s.ok() && fsync(fd) != 0) s = Status::IoError("meta index: fsync('" + tmp + "') failed", errno);
  close(fd);
  if (s.ok() && rename(tmp.c_str(), path_.c_str()) != 0) {
    s = Status::IoError("meta index: rename('" + tmp + "' -> '" + path_ + "') failed", errno);
  }
  if (!s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  std::string dir = std::filesystem::path(path_).parent_path().string();
  return FsyncDir(dir.empty() ? "." : dir);
}

std::string_view LocalMetaIndexer::WriteIdOf(const std::string& key, bool* present) const {
  auto it = records_.find(key);
  if (present != nullptr) *present = it != records_.end();
  if (it == records_.end()) return {};
  auto id = it->second.find(std::string(kWriteIdField));
  return id == it->second.end() ? std::string_view() : std::string_view(id->second);
}

Status LocalMetaIndexer::Put(uint64_t fencing_token, std::span<const MetaWrite> writes) {
  for (const MetaWrite& w : writes) {
    if (w.record.empty()) return Status::InvalidArgument("meta index: empty record for key '" + w.key + "'");
    bool utf8 = IsValidUtf8(w.key) && IsValidUtf8(w.write_id) && IsValidUtf8(w.expected_write_id);
    for (const auto& [field, value] : w.record) utf8 = utf8 && IsValidUtf8(field) && IsValidUtf8(value);
    if (!utf8) return Status::InvalidArgument("meta index: key, field or value of a record is not valid UTF-8");
  }
  std::lock_guard<std::mutex> lock(mu_);
  Result<uint64_t> newest = Fence(fencing_token);
  if (!newest.ok()) return newest.status();
  std::vector<MetaWrite> apply;  // what changes, each record with its write id
  apply.reserve(writes.size());
  for (const MetaWrite& w : writes) {
    const std::string_view current = WriteIdOf(w.key);
    switch (CheckWriteId(current, w.expected_write_id, w.write_id)) {
      case WriteIdVerdict::kConflict: return WriteConflict("meta index " + Describe(), w.key, current, w.expected_write_id);
      case WriteIdVerdict::kAlreadyApplied: continue;
      case WriteIdVerdict::kApply: break;
    }
    apply.push_back(w);
    if (!w.write_id.empty()) apply.back().record[std::string(kWriteIdField)] = w.write_id;
  }
  KVCHAOS_RETURN_IF_ERROR(Save(apply, {}, *newest));
  for (MetaWrite& w : apply) records_[w.key] = std::move(w.record);
  newest_token_ = *newest;
  return Status::Ok();
}

Status LocalMetaIndexer::Delete(uint64_t fencing_token, std::span<const std::string> keys,
                                std::span<const std::string> expected_write_ids, std::string_view delete_id) {
  KVCHAOS_RETURN_IF_ERROR(CheckDeleteArguments(keys.size(), expected_write_ids.size(), delete_id));
  std::lock_guard<std::mutex> lock(mu_);
  Result<uint64_t> newest = Fence(fencing_token);
  if (!newest.ok()) return newest.status();
  for (size_t i = 0; i < expected_write_ids.size(); ++i) {
    bool present = false;
    const std::string_view current = WriteIdOf(keys[i], &present);
    if (CheckDeleteWriteId(present, current, expected_write_ids[i]) == WriteIdVerdict::kConflict) {
      return WriteConflict("meta index " + Describe(), keys[i], current, expected_write_ids[i]);
    }
  }
  std::vector<std::string> doomed;  // all keys, but those written after an ordered delete
  for (const std::string& key : keys) {
    bool present = false;
    const std::string_view current = WriteIdOf(key, &present);
    if (present && !WrittenAfter(current, delete_id)) doomed.push_back(key);
  }
  KVCHAOS_RETURN_IF_ERROR(Save({}, doomed, *newest));
  for (const std::string& key : doomed) records_.erase(key);
  newest_token_ = *newest;
  return Status::Ok();
}

Result<std::vector<std::optional<MetaRecord>>> LocalMetaIndexer::Get(std::span<const std::string> keys) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::optional<MetaRecord>> out;
  out.reserve(keys.size());
  for (const std::string& key : keys) {
    auto it = records_.find(key);
    out.push_back(it == records_.end() ? std::nullopt : std::optional<MetaRecord>(it->second));
  }
  return out;
}

Result<std::vector<std::string>> LocalMetaIndexer::ListKeys(std::string_view prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [key, record] : records_) {
    if (key.starts_with(prefix)) out.push_back(key);
  }
  std::sort(out.begin(), out.end());  // the hash's order must not show
  return out;
}

Result<uint64_t> LocalMetaIndexer::NewestFencingToken() {
  std::lock_guard<std::mutex> lock(mu_);
  return newest_token_;
}

Status LocalMetaIndexer::RaiseFence(uint64_t fencing_token) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<uint64_t> newest = Fence(fencing_token);
  if (!newest.ok()) return newest.status();
  if (*newest == newest_token_) return Status::Ok();
  KVCHAOS_RETURN_IF_ERROR(Save({}, {}, *newest));  // persisted first: a restart keeps the fence
  newest_token_ = *newest;
  return Status::Ok();
}

}  // namespace kvchaos::meta
