// CacheManager: write sessions, checksums and IOV layouts into meta, winner-takes-checksum reads.
#include "core/meta/cache_manager.h"

#include <cstdio>

#include "core/common/json_text.h"
#include "core/common/rng.h"
#include "core/meta/fence.h"
#include "core/meta/locations_text.h"

namespace kvchaos::meta {
namespace {

std::string CacheKey(std::string_view key) { return std::string(CacheManager::kKeyPrefix) + std::string(key); }

std::string Hex64(uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<size_t>(i)] = kDigits[v & 0xf];
  return out;
}

uint64_t KeysHash(std::span<const std::string> keys) {
  uint64_t h = Mix64(keys.size());
  for (const std::string& key : keys) h = Mix64(h ^ HashName(key));
  return h;
}

// The location a session writes `key` at on `storage`.
CacheLocation FreshLocation(const std::string& key, const std::string& storage, const std::string& session_id) {
  CacheLocation fresh;
  fresh.storage = storage;
  fresh.uri = CacheManager::BlockIdHexForKey(key);
  fresh.status = LocationStatus::kWriting;
  fresh.write_session = session_id;
  return fresh;
}

}  // namespace

std::string CacheManager::BlockIdHexForKey(std::string_view key) {
  const uint64_t hi = Mix64(HashName(key));
  const uint64_t lo = Mix64(HashName(std::string("kvchaos-block-id:") + std::string(key)) ^ 0x5bd1e9955bd1e995ULL);
  return Hex64(hi) + Hex64(lo);
}

MetaRecord CacheManager::EntryRecord(const std::vector<CacheLocation>& locations) {
  return MetaRecord{{"locations", LocationsJson(locations)}};
}

void CacheManager::KeepWritten(std::span<const MetaWrite> writes,
                               std::span<const std::vector<CacheLocation>* const> locations) {
  for (size_t w = 0; w < writes.size(); ++w) {
    std::vector<CacheLocation> as_read = *locations[w];
    // What CacheLocation::FromJson makes of the text: a location without a checksum reads as
    // checksum 0 of no algorithm. (The manager test checks that kept entries equal parsed ones.)
    for (CacheLocation& loc : as_read) {
      if (!loc.checksum_present) {
        loc.checksum = 0;
        loc.checksum_algo = integrity::ChecksumAlgo::kUnspecified;
      }
    }
    parsed_.Keep(writes[w].key, writes[w].record.at("locations"), as_read);
  }
}

std::string CacheManager::WriteIdOf(const std::optional<MetaRecord>& record) {
  if (!record) return {};
  auto id = record->find(std::string(kWriteIdField));
  return id == record->end() ? std::string() : id->second;
}

std::string CacheManager::NextWriteId(uint64_t fencing_token) {
  return MakeWriteId(fencing_token, next_session_.fetch_add(1));
}

Result<std::vector<std::vector<CacheLocation>>> CacheManager::LoadEntries(std::span<const std::string> keys,
                                                                          std::vector<std::string>* write_ids) {
  std::vector<std::string> index_keys;
  index_keys.reserve(keys.size());
  for (const std::string& key : keys) index_keys.push_back(CacheKey(key));
  Result<std::vector<std::optional<MetaRecord>>> records = indexer_.Get(index_keys);
  if (!records.ok()) return records.status();
  std::vector<std::vector<CacheLocation>> out(keys.size());
  if (write_ids != nullptr) write_ids->clear();
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::optional<MetaRecord>& record = (*records)[i];
    if (write_ids != nullptr) write_ids->push_back(WriteIdOf(record));
    if (!record) continue;
    auto field = record->find("locations");
    if (field != record->end() && parsed_.Find(index_keys[i], field->second, &out[i])) continue;
    // The narrow reader takes almost every entry; the message prefix is built only for the parser.
    if (field == record->end() || !ReadWrittenLocations(field->second, &out[i])) {
      const std::string where = "cache entry '" + keys[i] + "' in " + indexer_.Describe();
      if (field == record->end()) return Status::Internal(where + ": no 'locations' field");
      Result<std::vector<CacheLocation>> parsed = ParseLocationsText(field->second, where);
      if (!parsed.ok()) return Status::Internal(parsed.status().message());
      out[i] = std::move(*parsed);
    }
    parsed_.Keep(index_keys[i], field->second, out[i]);
  }
  return out;
}

WriteSession CacheManager::SessionAgain(const AnsweredStart& answered, std::span<const std::string> keys,
                                        const StorageConfig& config,
                                        const std::vector<std::vector<CacheLocation>>& entries) {
  WriteSession session;
  session.session_id = answered.session_id;
  session.fencing_token = answered.fencing_token;
  session.storage = answered.storage;
  session.integrity = config.integrity;
  session.keys.assign(keys.begin(), keys.end());
  for (size_t i = 0; i < keys.size(); ++i) {
    const CacheLocation* serving = nullptr;
    for (const CacheLocation& loc : entries[i]) {
      if (loc.storage == session.storage && loc.status == LocationStatus::kServing) serving = &loc;
    }
    session.locations.push_back(serving ? *serving : FreshLocation(keys[i], session.storage, session.session_id));
    session.to_write.push_back(serving ? 0 : 1);
  }
  return session;
}

void CacheManager::Remember(const std::string& request_id, AnsweredStart answered) {
  if (answered_.size() >= kAnsweredMax) {
    answered_.erase(answered_order_.front());
    answered_order_.pop_front();
  }
  if (answered_.insert_or_assign(request_id, std::move(answered)).second) answered_order_.push_back(request_id);
}

Result<WriteSession> CacheManager::StartWriteCache(std::span<const std::string> keys, const std::string& storage,
                                                   const std::string& request_id) {
  if (request_id.size() > kRequestIdMaxBytes) {
    return Status::InvalidArgument("StartWriteCache: request_id is " + std::to_string(request_id.size()) +
                                   " bytes; at most " + std::to_string(kRequestIdMaxBytes));
  }
  if (!IsValidUtf8(request_id)) return Status::InvalidArgument("StartWriteCache: request_id is not valid UTF-8");
  std::optional<StorageConfig> config;
  if (storage.empty()) {
    std::vector<StorageConfig> all = registry_.List();
    if (all.empty()) return Status::Unavailable("StartWriteCache: no storage is registered");
    if (all.size() > 1) return Status::InvalidArgument("StartWriteCache: several storages are registered; name one");
    config = all[0];
  } else {
    config = registry_.Get(storage);
    if (!config) return Status::NotFound("StartWriteCache: storage '" + storage + "' is not registered");
  }
  for (const std::string& key : keys) {
    if (key.empty()) return Status::InvalidArgument("StartWriteCache: empty key");
    if (!IsValidUtf8(key)) return Status::InvalidArgument("StartWriteCache: a key is not valid UTF-8");
  }
  MutexLock lock(rmw_mu_);
  std::vector<std::string> read_ids;
  Result<std::vector<std::vector<CacheLocation>>> entries = LoadEntries(keys, &read_ids);
  if (!entries.ok()) return entries.status();
  const uint64_t keys_hash = KeysHash(keys);
  if (!request_id.empty()) {
    auto it = answered_.find(request_id);
    if (it != answered_.end() && it->second.storage == config->global_unique_name && it->second.keys_hash == keys_hash) {
      return SessionAgain(it->second, keys, *config, *entries);
    }
  }

  WriteSession session;
  session.fencing_token = fencing_token();  // read once: the id and the index write name one term
  session.session_id = "ws-" + std::to_string(session.fencing_token) + "-" + std::to_string(next_session_.fetch_add(1));
  session.storage = config->global_unique_name;
  session.integrity = config->integrity;
  session.keys.assign(keys.begin(), keys.end());
  const std::string write_id = NextWriteId(session.fencing_token);
  std::vector<MetaWrite> writes;
  std::vector<const std::vector<CacheLocation>*> written;
  for (size_t i = 0; i < keys.size(); ++i) {
    std::vector<CacheLocation>& locations = (*entries)[i];
    CacheLocation* mine = nullptr;
    for (CacheLocation& loc : locations) {
      if (loc.storage == session.storage) mine = &loc;
    }
    if (mine != nullptr && mine->status == LocationStatus::kServing) {
      session.locations.push_back(*mine);
      session.to_write.push_back(0);
      continue;
    }
    CacheLocation fresh = FreshLocation(keys[i], session.storage, session.session_id);
    if (mine != nullptr) {
      *mine = fresh;  // a previous writer never finished: take the location over
    } else {
      locations.push_back(fresh);
    }
    session.locations.push_back(fresh);
    session.to_write.push_back(1);
    writes.push_back(MetaWrite{CacheKey(keys[i]), EntryRecord(locations), write_id, read_ids[i]});
    written.push_back(&locations);
  }
  KVCHAOS_RETURN_IF_ERROR(indexer_.Put(session.fencing_token, writes));
  KeepWritten(writes, written);
  if (!request_id.empty()) {
    Remember(request_id, AnsweredStart{session.session_id, session.fencing_token, session.storage, keys_hash});
  }
  return session;
}

Status CacheManager::FinishWriteCache(const std::string& session_id, std::span<const std::string> keys,
                                      std::span<const int64_t> checksums, std::span<const uint8_t> checksum_present,
                                      std::span<const IovLayout> iov_layouts, int64_t inline_header_version) {
  if (inline_header_version < 0) {
    return Status::InvalidArgument("FinishWriteCache: inline_header_version " + std::to_string(inline_header_version) +
                                   " is negative");
  }
  if (!checksums.empty() && checksums.size() != keys.size()) {
    return Status::InvalidArgument("FinishWriteCache: " + std::to_string(checksums.size()) + " checksums for " +
                                   std::to_string(keys.size()) + " keys");
  }
  if (!checksum_present.empty() && checksum_present.size() != checksums.size()) {
    return Status::InvalidArgument("FinishWriteCache: " + std::to_string(checksum_present.size()) +
                                   " presence flags for " + std::to_string(checksums.size()) + " checksums");
  }
  if (!iov_layouts.empty() && iov_layouts.size() != keys.size()) {
    return Status::InvalidArgument("FinishWriteCache: " + std::to_string(iov_layouts.size()) + " IOV layouts for " +
                                   std::to_string(keys.size()) + " keys");
  }
  MutexLock lock(rmw_mu_);
  std::vector<std::string> read_ids;
  Result<std::vector<std::vector<CacheLocation>>> entries = LoadEntries(keys, &read_ids);
  if (!entries.ok()) return entries.status();
  const uint64_t token = fencing_token();
  const std::string write_id = NextWriteId(token);
  std::vector<MetaWrite> writes;
  std::vector<const std::vector<CacheLocation>*> written;
  for (size_t i = 0; i < keys.size(); ++i) {
    std::vector<CacheLocation>& locations = (*entries)[i];
    CacheLocation* mine = nullptr;
    for (CacheLocation& loc : locations) {
      if (loc.write_session == session_id && loc.status == LocationStatus::kWriting) mine = &loc;
    }
    if (mine == nullptr) {
      bool served = false;
      for (const CacheLocation& loc : locations) served |= loc.status == LocationStatus::kServing;
      if (served) continue;  // the session found it already cached: nothing to commit
      return Status::InvalidArgument("FinishWriteCache: key '" + keys[i] + "' has no location being written by session '" +
                                     session_id + "' (already finished, removed, or taken over)");
    }
    std::optional<StorageConfig> config = registry_.Get(mine->storage);
    mine->status = LocationStatus::kServing;
    mine->write_session.clear();
    if (!checksums.empty()) {
      mine->checksum_present = checksum_present.empty() || checksum_present[i] != 0;
      mine->checksum = mine->checksum_present ? checksums[i] : 0;
      mine->checksum_algo = mine->checksum_present && config ? config->integrity.algo : integrity::ChecksumAlgo::kUnspecified;
    }
    if (!iov_layouts.empty()) mine->iov_layout = iov_layouts[i];
    mine->inline_header_version = inline_header_version;
    writes.push_back(MetaWrite{CacheKey(keys[i]), EntryRecord(locations), write_id, read_ids[i]});
    written.push_back(&locations);
  }
  KVCHAOS_RETURN_IF_ERROR(indexer_.Put(token, writes));
  KeepWritten(writes, written);
  return Status::Ok();
}

Result<std::vector<std::optional<CacheLocation>>> CacheManager::GetCacheLocation(std::span<const std::string> keys) {
  Result<std::vector<std::vector<CacheLocation>>> entries = LoadEntries(keys);
  if (!entries.ok()) return entries.status();
  std::vector<std::optional<CacheLocation>> out(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    for (const CacheLocation& loc : (*entries)[i]) {
      if (loc.status == LocationStatus::kServing) {
        out[i] = loc;  // the winner, with its own checksum
        break;
      }
    }
  }
  return out;
}

Status CacheManager::RemoveCache(std::span<const std::string> keys) {
  std::vector<std::string> index_keys;
  for (const std::string& key : keys) index_keys.push_back(CacheKey(key));
  // Ordered by a write id of its own (WrittenAfter): a late attempt of this delete keeps what was
  // written after it was issued, with no read first (an extra index round trip let a delete
  // admitted late in a term land past its lease: WorldTest.TermsStopOneLoopBefore...).
  const uint64_t token = fencing_token();
  return indexer_.Delete(token, index_keys, {}, sole_issuer_ ? NextWriteId(token) : std::string());
}

}  // namespace kvchaos::meta
