// RebuildIndex: scan a storage's block files, read their inline headers, recreate the index
// entries the index lost (see the header for the rules and why writes go through MetaClient).
#include "core/client/index_rebuild.h"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "core/common/utf8.h"
#include "core/meta/cache_manager.h"
#include "core/meta/inline_header.h"

namespace kvchaos::client {
namespace {

using meta::InlineHeader;

constexpr uint64_t kHeaderBytes = InlineHeader::kBytes;

Result<std::vector<std::string>> ListDirectory(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound("directory '" + dir + "' does not exist");
    return Status::IoError("opendir('" + dir + "') failed", err);
  }
  std::vector<std::string> names;
  int err = 0;
  for (;;) {
    errno = 0;
    const dirent* entry = readdir(d);
    if (entry == nullptr) {
      err = errno;
      break;
    }
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  closedir(d);
  if (err != 0) return Status::IoError("readdir('" + dir + "') failed", err);
  std::sort(names.begin(), names.end());  // the scan order must not depend on the file system's
  return names;
}

std::string Hex64(int64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(static_cast<uint64_t>(v)));
  return buf;
}

std::string DescribeChecksum(bool present, int64_t value, integrity::ChecksumAlgo algo) {
  if (!present) return "checksum=none";
  return "checksum=" + Hex64(value) + " algo=" + std::string(integrity::ChecksumAlgoName(algo));
}

// A block file read far enough to be judged: a verdict that skips it, or its header.
struct Inspection {
  std::optional<RebuildVerdict> verdict;
  std::string detail;
  std::string key;  // with a verdict: the key a header that decoded names (for the message only)
  InlineHeader header;
  bool vanished = false;  // listed, then gone (evicted or removed meanwhile)
};

Inspection Skip(RebuildVerdict verdict, std::string detail, const InlineHeader* header = nullptr) {
  Inspection out;
  out.verdict = verdict;
  out.detail = std::move(detail);
  if (header != nullptr && header->key) out.key = *header->key;
  return out;
}

// Reads the kBytes of a header at `offset`: the decoded header, Corruption (what is wrong with it),
// NotFound (a short read: the file shrank) or IoError.
Result<InlineHeader> ReadHeaderAt(store::FileOps& ops, int fd, const std::string& path, uint64_t offset) {
  std::vector<std::byte> bytes(kHeaderBytes);
  const ssize_t n = ops.Pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
  if (n < 0) return Status::IoError("pread('" + path + "') of its header failed", errno);
  if (static_cast<uint64_t>(n) != kHeaderBytes) {
    return Status::NotFound("short read of the header: " + std::to_string(n) + " of " + std::to_string(kHeaderBytes) +
                            " bytes (the file shrank while it was read)");
  }
  return InlineHeader::Decode(bytes);
}

// The header of a block file, judged by its length too: an intact headed block is data_length +
// 4096 bytes with the header last, and its data length is the storage's block size.
Inspection InspectFile(store::FileOps& ops, const std::string& path, uint64_t block_size) {
  bool is_dir = false;
  off_t stat_size = 0;
  if (ops.Stat(path, &is_dir, &stat_size) != 0) {
    const int err = errno;
    if (err == ENOENT) {
      Inspection gone;
      gone.vanished = true;
      return gone;
    }
    return Skip(RebuildVerdict::kIoError, Status::IoError("stat failed", err).ToString());
  }
  if (is_dir) return Skip(RebuildVerdict::kIoError, "a directory where a block file belongs");
  const auto size = static_cast<uint64_t>(stat_size);
  const uint64_t whole = block_size + kHeaderBytes;
  if (size == block_size) {
    return Skip(RebuildVerdict::kNoHeader, "file of " + std::to_string(size) +
                                               " bytes, the block size without a header: written before headers "
                                               "were on, or cut at its header");
  }
  if (size < kHeaderBytes) {
    return Skip(RebuildVerdict::kTorn, "file of " + std::to_string(size) + " bytes, shorter than a header; want " +
                                           std::to_string(whole) + " bytes");
  }
  const int fd = ops.Open(path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      Inspection gone;
      gone.vanished = true;
      return gone;
    }
    return Skip(RebuildVerdict::kIoError, Status::IoError("open failed", err).ToString());
  }
  Result<InlineHeader> last = ReadHeaderAt(ops, fd, path, size - kHeaderBytes);
  // A file grown past its block (a partial overwrite, bytes appended) still has its header at
  // block_size: found there, it names the length the file should have.
  Result<InlineHeader> at_block = Status::NotFound("not read");
  if (!last.ok() && last.status().code() == StatusCode::kCorruption && size > whole) {
    at_block = ReadHeaderAt(ops, fd, path, block_size);
  }
  ops.Close(fd);
  if (!last.ok() && last.status().code() == StatusCode::kIoError) {
    return Skip(RebuildVerdict::kIoError, last.status().ToString());
  }
  if (!last.ok() && last.status().code() == StatusCode::kNotFound) {
    return Skip(RebuildVerdict::kTorn, last.status().message());
  }
  if (at_block.ok()) {
    return Skip(RebuildVerdict::kTorn, "file of " + std::to_string(size) + " bytes; the header at " +
                                           std::to_string(block_size) + " says " +
                                           std::to_string(at_block->data_length + kHeaderBytes),
                &*at_block);
  }
  if (!last.ok()) {
    if (size < whole) {
      return Skip(RebuildVerdict::kTorn, "file of " + std::to_string(size) + " bytes, shorter than data and header; want " +
                                             std::to_string(whole) + " bytes");
    }
    return Skip(RebuildVerdict::kBadHeader, last.status().message());
  }
  if (last->data_length != size - kHeaderBytes) {
    return Skip(RebuildVerdict::kTorn, "file of " + std::to_string(size) + " bytes; its header says data length " +
                                           std::to_string(last->data_length),
                &*last);
  }
  if (last->data_length != block_size) {
    return Skip(RebuildVerdict::kTorn, "its header says data length " + std::to_string(last->data_length) +
                                           ", the storage's block size is " + std::to_string(block_size),
                &*last);
  }
  Inspection ok;
  ok.header = std::move(*last);
  return ok;
}

// One block whose header is good, waiting for its batch's meta calls.
struct Candidate {
  std::string key;
  std::string path;
  std::string hex;  // its block id, the location an entry names
  InlineHeader header;
};

class Rebuild {
 public:
  Rebuild(MetaClient& meta, const IndexRebuildOptions& options, const meta::StorageConfig& storage)
      : meta_(meta), options_(options), storage_(storage) {
    report_.dry_run = options.dry_run;
    filtered_ = options.keys.has_value();
    if (filtered_) {
      for (const std::string& key : *options.keys) {
        listed_.insert(key);
        if (key.size() > InlineHeader::kMaxStoredKeyBytes) {
          long_keys_[{static_cast<uint32_t>(key.size()), InlineHeader::HashKey(key)}].push_back(key);
        }
      }
    }
  }

  Status Run();
  IndexRebuildReport& report() { return report_; }

 private:
  Status ScanBackends();
  // Judges the block file of `id` at `path`; queues it for meta when its header is good.
  Status Consider(const store::BlockId& id, const std::string& path);
  void ConsiderStray(const std::string& path, const std::string& name, const std::string& dir);
  // The key a good header names: its stored bytes, or the listed key of its length and hash
  // (preferring the one whose block id is the file's name).
  std::optional<std::string> KeyOf(const InlineHeader& header, const std::string& hex) const;
  Status Flush();
  void Judge(const meta::CacheLocation& entry, const Candidate& c);
  std::string DescribeBlock(const Candidate& c) const;
  void Emit(RebuildVerdict verdict, std::string key, std::string path, std::string detail);
  bool WithChecksums() const { return storage_.integrity.enable_meta_checksum; }

  MetaClient& meta_;
  const IndexRebuildOptions& options_;
  const meta::StorageConfig& storage_;
  IndexRebuildReport report_;
  bool filtered_ = false;  // options.keys given: only listed keys are rebuilt
  std::set<std::string> listed_;
  std::map<std::pair<uint32_t, uint64_t>, std::vector<std::string>> long_keys_;
  std::set<std::string> found_;  // listed keys whose block was found, whatever its verdict
  std::map<store::BlockId, std::vector<int>> blocks_;  // block id -> backends holding its file
  struct Stray {
    std::string path, name, dir;
  };
  std::vector<Stray> strays_;  // block files in another shard directory than their name's
  std::vector<Candidate> pending_;
};

void Rebuild::Emit(RebuildVerdict verdict, std::string key, std::string path, std::string detail) {
  switch (verdict) {
    case RebuildVerdict::kRebuilt: ++report_.rebuilt; break;
    case RebuildVerdict::kAgreed: ++report_.agreed; return;  // counted, not listed
    case RebuildVerdict::kConflict: ++report_.conflicts; break;
    case RebuildVerdict::kBadHeader: ++report_.bad_header; break;
    case RebuildVerdict::kTorn: ++report_.torn; break;
    case RebuildVerdict::kNoHeader: ++report_.no_header; break;
    case RebuildVerdict::kMisplaced: ++report_.misplaced; break;
    case RebuildVerdict::kKeyUnknown: ++report_.key_unknown; break;
    case RebuildVerdict::kAlgoMismatch: ++report_.algo_mismatch; break;
    case RebuildVerdict::kIoError: ++report_.io_errors; break;
    case RebuildVerdict::kMissing: ++report_.missing; break;
  }
  if (verdict != RebuildVerdict::kRebuilt && verdict != RebuildVerdict::kConflict &&
      verdict != RebuildVerdict::kMissing) {
    ++report_.skipped;
  }
  RebuildFinding finding{verdict, std::move(key), std::move(path), std::move(detail)};
  if (options_.on_finding) options_.on_finding(finding);
  report_.findings.push_back(std::move(finding));
}

Status Rebuild::ScanBackends() {
  const std::vector<std::string> dirs = store::ShardDirNames(options_.shard_width);
  for (size_t b = 0; b < options_.backends.size(); ++b) {
    for (const std::string& dir : dirs) {
      const std::string where = options_.backends[b] + "/" + dir;
      Result<std::vector<std::string>> names = options_.list_dir ? options_.list_dir(where) : ListDirectory(where);
      if (!names.ok()) {
        if (names.status().code() == StatusCode::kNotFound) continue;
        return names.status().WithContext("backend '" + options_.backends[b] + "'");
      }
      for (const std::string& name : *names) {
        Result<store::BlockId> id = store::BlockId::FromHex(name);
        // The store names block files in lower case; anything else (".tmp" files of writes in
        // flight, probe files, foreign files) is not a block a Load could find.
        if (!id.ok() || id->Hex() != name) {
          ++report_.ignored_files;
          continue;
        }
        if (store::ShardDirName(name, options_.shard_width) != dir) {
          strays_.push_back({where + "/" + name, name, dir});
          continue;
        }
        blocks_[*id].push_back(static_cast<int>(b));
      }
    }
  }
  return Status::Ok();
}

std::optional<std::string> Rebuild::KeyOf(const InlineHeader& header, const std::string& hex) const {
  if (header.key) return header.key;
  auto it = long_keys_.find({header.key_length, header.key_hash});
  if (it == long_keys_.end()) return std::nullopt;
  for (const std::string& key : it->second) {
    if (meta::CacheManager::BlockIdHexForKey(key) == hex) return key;
  }
  return it->second.front();  // a listed key of this length and hash, in the wrong file: MISPLACED
}

void Rebuild::ConsiderStray(const std::string& path, const std::string& name, const std::string& dir) {
  ++report_.scanned;
  Inspection seen = InspectFile(*options_.file_ops, path, options_.block_size);
  if (seen.vanished) {
    --report_.scanned;
    ++report_.vanished;
    return;
  }
  // Reported whether or not its header is good: the store can never read it where it is.
  std::string key;
  if (!seen.verdict) {
    if (std::optional<std::string> named = KeyOf(seen.header, name)) key = *named;
    if (filtered_ && !listed_.contains(key)) {
      ++report_.not_listed;
      return;
    }
    if (!key.empty()) found_.insert(key);
  }
  Emit(RebuildVerdict::kMisplaced, key, path,
       "in shard directory '" + dir + "', where the store never looks for block " + name + " (it looks in '" +
           store::ShardDirName(name, options_.shard_width) + "')");
}

Status Rebuild::Consider(const store::BlockId& id, const std::string& path) {
  ++report_.scanned;
  Inspection seen = InspectFile(*options_.file_ops, path, options_.block_size);
  if (seen.vanished) {
    --report_.scanned;
    ++report_.vanished;
    return Status::Ok();
  }
  if (seen.verdict) {
    if (!seen.key.empty()) found_.insert(seen.key);  // a listed key whose block is torn is not MISSING
    Emit(*seen.verdict, seen.key, path, seen.detail);
    return Status::Ok();
  }
  const std::string hex = id.Hex();
  std::optional<std::string> key = KeyOf(seen.header, hex);
  if (!key) {
    if (filtered_) {
      ++report_.not_listed;  // no listed key has its length and hash
      return Status::Ok();
    }
    Emit(RebuildVerdict::kKeyUnknown, "", path,
         "its header keeps only the key's length and hash (" + seen.header.DescribeKey() +
             "): name the key with --keys-from");
    return Status::Ok();
  }
  if (filtered_ && !listed_.contains(*key)) {
    ++report_.not_listed;
    return Status::Ok();
  }
  found_.insert(*key);
  if (key->empty() || !IsValidUtf8(*key)) {
    Emit(RebuildVerdict::kBadHeader, "", path,
         std::string("its header names a key no client writes (") + (key->empty() ? "empty" : "not UTF-8") + ")");
    return Status::Ok();
  }
  const std::string expected = meta::CacheManager::BlockIdHexForKey(*key);
  if (expected != hex) {
    Emit(RebuildVerdict::kMisplaced, *key, path,
         "its header names a key whose block id is " + expected + ", not the file's name " + hex);
    return Status::Ok();
  }
  pending_.push_back({*key, path, hex, std::move(seen.header)});
  if (pending_.size() >= options_.batch) return Flush();
  return Status::Ok();
}

std::string Rebuild::DescribeBlock(const Candidate& c) const {
  const InlineHeader& h = c.header;
  return "block: storage=" + options_.storage + " location=" + c.hex + " " +
         DescribeChecksum(h.checksum_present, h.checksum, h.checksum_algo) + " layout=" + h.layout.ToString();
}

void Rebuild::Judge(const meta::CacheLocation& entry, const Candidate& c) {
  const InlineHeader& h = c.header;
  std::string why;
  if (entry.storage != options_.storage || entry.uri != c.hex) {
    why = "another location";
  } else if (entry.checksum_present && h.checksum_present) {
    if (entry.checksum != h.checksum || entry.checksum_algo != h.checksum_algo) why = "another checksum";
  } else if (entry.checksum_present != (h.checksum_present && WithChecksums())) {
    why = entry.checksum_present ? "a checksum the block has none of" : "no checksum, the block has one";
  }
  if (why.empty() && entry.iov_layout.known() && h.layout.known() && entry.iov_layout != h.layout) {
    why = "another IOV layout";
  }
  if (why.empty()) {
    Emit(RebuildVerdict::kAgreed, c.key, c.path, "");
    return;
  }
  Emit(RebuildVerdict::kConflict, c.key, c.path,
       "the index's entry has " + why + ": entry: storage=" + entry.storage + " location=" + entry.uri + " " +
           DescribeChecksum(entry.checksum_present, entry.checksum, entry.checksum_algo) +
           " layout=" + entry.iov_layout.ToString() + "; " + DescribeBlock(c) + "; entry left as it is");
}

Status Rebuild::Flush() {
  if (pending_.empty()) return Status::Ok();
  std::vector<Candidate> batch;
  batch.swap(pending_);
  const auto failed = [&](const Status& s, std::string_view call) {
    return s.WithContext("rebuild: " + std::string(call) + " of a batch of " + std::to_string(batch.size()) +
                         " keys (after " + std::to_string(report_.rebuilt) + " entries rebuilt)");
  };
  std::vector<std::string> keys;
  for (const Candidate& c : batch) keys.push_back(c.key);
  Result<std::vector<std::optional<meta::CacheLocation>>> entries = meta_.GetLocations(keys);
  if (!entries.ok()) return failed(entries.status(), "GetLocations");
  std::vector<const Candidate*> absent;
  for (size_t i = 0; i < batch.size(); ++i) {
    if ((*entries)[i]) {
      Judge(*(*entries)[i], batch[i]);
      continue;
    }
    const InlineHeader& h = batch[i].header;
    if (WithChecksums() && h.checksum_present && h.checksum_algo != storage_.integrity.algo) {
      // FinishWrite labels a checksum with the storage's algorithm: this one would be misread.
      Emit(RebuildVerdict::kAlgoMismatch, batch[i].key, batch[i].path,
           "its header's checksum is " + std::string(integrity::ChecksumAlgoName(h.checksum_algo)) +
               ", the storage's algorithm is " + std::string(integrity::ChecksumAlgoName(storage_.integrity.algo)));
      continue;
    }
    absent.push_back(&batch[i]);
  }
  if (absent.empty()) return Status::Ok();
  if (options_.dry_run) {
    for (const Candidate* c : absent) Emit(RebuildVerdict::kRebuilt, c->key, c->path, "dry run: not written");
    return Status::Ok();
  }
  std::vector<std::string> start_keys;
  for (const Candidate* c : absent) start_keys.push_back(c->key);
  Result<meta::WriteSession> session = meta_.StartWrite(start_keys, options_.storage);
  if (!session.ok()) return failed(session.status(), "StartWrite");
  std::vector<const Candidate*> written;
  std::vector<std::string> finish_keys;
  std::vector<int64_t> sums;
  std::vector<uint8_t> present;
  std::vector<meta::IovLayout> layouts;
  for (size_t j = 0; j < absent.size(); ++j) {
    const Candidate& c = *absent[j];
    const meta::CacheLocation& loc = session->locations[j];
    if (!session->to_write[j]) {
      Judge(loc, c);  // a Save committed it since GetLocations: judged like any entry
      continue;
    }
    if (loc.uri != c.hex) {
      // Meta would point the key elsewhere than the block: committing would make a misrouted entry.
      Emit(RebuildVerdict::kConflict, c.key, c.path,
           "meta assigns it location " + loc.uri + ", the block is at " + c.hex + "; nothing committed");
      continue;
    }
    written.push_back(&c);
    finish_keys.push_back(c.key);
    sums.push_back(c.header.checksum_present ? c.header.checksum : 0);
    present.push_back(c.header.checksum_present ? 1 : 0);
    layouts.push_back(c.header.layout);
  }
  if (finish_keys.empty()) return Status::Ok();
  // As a Save sends them: checksums (with the layouts they bind) only when meta keeps checksums.
  const bool with_sums = WithChecksums();
  Status finished = meta_.FinishWrite(session->session_id, finish_keys, with_sums ? sums : std::vector<int64_t>{},
                                      with_sums ? present : std::vector<uint8_t>{},
                                      with_sums ? layouts : std::vector<meta::IovLayout>{}, InlineHeader::kVersion);
  if (!finished.ok()) return failed(finished, "FinishWrite");
  for (const Candidate* c : written) {
    Emit(RebuildVerdict::kRebuilt, c->key, c->path,
         DescribeChecksum(with_sums && c->header.checksum_present, c->header.checksum, c->header.checksum_algo));
  }
  return Status::Ok();
}

Status Rebuild::Run() {
  const MonoTime start = options_.runtime->Now();
  KVCHAOS_RETURN_IF_ERROR(ScanBackends());
  const uint64_t n = options_.backends.size();
  for (const auto& [id, holders] : blocks_) {
    // The route a Load follows: primary = hash % n, then onwards with wrap-around.
    const uint64_t primary = store::BlockIdHasher{}(id) % n;
    int chosen = holders.front();
    for (uint64_t step = 0; step < n; ++step) {
      const int candidate = static_cast<int>((primary + step) % n);
      if (std::find(holders.begin(), holders.end(), candidate) != holders.end()) {
        chosen = candidate;
        break;
      }
    }
    report_.copies += holders.size() - 1;
    KVCHAOS_RETURN_IF_ERROR(Consider(id, store::BlockPath(options_.backends[static_cast<size_t>(chosen)], id,
                                                          options_.shard_width)));
  }
  KVCHAOS_RETURN_IF_ERROR(Flush());
  for (const Stray& stray : strays_) ConsiderStray(stray.path, stray.name, stray.dir);
  if (filtered_) {
    std::set<std::string> reported;
    for (const std::string& key : *options_.keys) {
      if (found_.contains(key) || !reported.insert(key).second) continue;
      Emit(RebuildVerdict::kMissing, key, "", "listed, but no block of it is on the storage");
    }
  }
  report_.elapsed = options_.runtime->Now() - start;
  return Status::Ok();
}

}  // namespace

std::string_view RebuildVerdictName(RebuildVerdict verdict) {
  switch (verdict) {
    case RebuildVerdict::kRebuilt: return "REBUILT";
    case RebuildVerdict::kAgreed: return "AGREED";
    case RebuildVerdict::kConflict: return "CONFLICT";
    case RebuildVerdict::kBadHeader: return "BADHEADER";
    case RebuildVerdict::kTorn: return "TORN";
    case RebuildVerdict::kNoHeader: return "NOHEADER";
    case RebuildVerdict::kMisplaced: return "MISPLACED";
    case RebuildVerdict::kKeyUnknown: return "KEYUNKNOWN";
    case RebuildVerdict::kAlgoMismatch: return "BADALGO";
    case RebuildVerdict::kIoError: return "IOERROR";
    case RebuildVerdict::kMissing: return "MISSING";
  }
  return "?";
}

std::string FindingLine(const RebuildFinding& f) {
  std::string line(RebuildVerdictName(f.verdict));
  if (!f.key.empty()) line += " key=" + f.key;
  if (!f.path.empty()) line += " file=" + f.path;
  if (!f.detail.empty()) line += " (" + f.detail + ")";
  return line;
}

double IndexRebuildReport::blocks_per_second() const {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  return seconds > 0 ? static_cast<double>(scanned) / seconds : 0.0;
}

std::string IndexRebuildReport::Summary() const {
  char timing[96];
  std::snprintf(timing, sizeof(timing), " in %.3f s (%.0f blocks/s)", std::chrono::duration<double>(elapsed).count(),
                blocks_per_second());
  return "scanned " + std::to_string(scanned) + " blocks" + timing + ", rebuilt " + std::to_string(rebuilt) +
         (dry_run ? " (dry run: nothing written)" : "") + ", agreed " + std::to_string(agreed) + ", conflicts " +
         std::to_string(conflicts) + ", skipped " + std::to_string(skipped);
}

Result<IndexRebuildReport> RebuildIndex(MetaClient& meta, const IndexRebuildOptions& options) {
  if (options.storage.empty()) return Status::InvalidArgument("rebuild: storage: empty");
  if (options.backends.empty()) return Status::InvalidArgument("rebuild: storage '" + options.storage + "': no backend");
  if (options.block_size == 0) return Status::InvalidArgument("rebuild: block_size: 0");
  if (options.batch == 0) return Status::InvalidArgument("rebuild: batch: 0");
  if (options.shard_width < 0 || options.shard_width > store::kMaxShardWidth) {
    return Status::InvalidArgument("rebuild: shard_width " + std::to_string(options.shard_width) + " is not in 0.." +
                                   std::to_string(store::kMaxShardWidth));
  }
  if (options.file_ops == nullptr || options.runtime == nullptr) {
    return Status::InvalidArgument("rebuild: file_ops and runtime must be set");
  }
  Result<meta::StorageConfig> storage = meta.GetStorageConfig(options.storage);
  if (!storage.ok()) return storage.status().WithContext("rebuild: storage '" + options.storage + "'");
  const integrity::DataIntegrityConfig& integrity = storage->integrity;
  if (!integrity.enable_inline_header || integrity.inline_header_version < 1) {
    return Status::InvalidArgument(
        "rebuild: storage '" + options.storage +
        "' has inline headers off (integrity.enable_inline_header: " + (integrity.enable_inline_header ? "true" : "false") +
        ", inline_header_version: " + std::to_string(integrity.inline_header_version) +
        "): rebuilding needs self-describing blocks, and its blocks do not name their keys");
  }
  KVCHAOS_RETURN_IF_ERROR(integrity.Validate("rebuild: storage '" + options.storage + "'.integrity"));
  Rebuild rebuild(meta, options, *storage);
  KVCHAOS_RETURN_IF_ERROR(rebuild.Run());
  return std::move(rebuild.report());
}

}  // namespace kvchaos::client
