// File coordination backend (see the header for what it promises and what it does not).
#include "core/election/coordination_file_backend.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <system_error>

namespace kvchaos::election {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "kvchaos-coordination 1";
constexpr size_t kMaxFileNameBytes = 200;
constexpr size_t kMaxValueBytes = 16 << 20;

bool PlainChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == ':';
}

std::string ReadBootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id.empty() ? "unknown" : id;
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError("write('" + path + "') failed", errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// Parses "<name> <rest>" lines of a record; false when the line is not that field.
bool Field(std::string_view& text, std::string_view name, std::string_view* rest) {
  const size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return false;
  std::string_view line = text.substr(0, nl);
  if (line.size() < name.size() + 1 || line.substr(0, name.size()) != name || line[name.size()] != ' ') return false;
  *rest = line.substr(name.size() + 1);
  text.remove_prefix(nl + 1);
  return true;
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::string EscapeFileName(std::string_view key) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : key) {
    if (PlainChar(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

bool UnescapeFileName(std::string_view name, std::string* key) {
  key->clear();
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '%') {
      if (!PlainChar(static_cast<unsigned char>(name[i]))) return false;
      key->push_back(name[i]);
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= name.size()) return false;
    auto [p, ec] = std::from_chars(name.data() + i + 1, name.data() + i + 3, v, 16);
    if (ec != std::errc() || p != name.data() + i + 3) return false;
    key->push_back(static_cast<char>(v));
    i += 2;
  }
  return true;
}

namespace {

// A temp file name no other writer uses (pid + a per-process counter), so writers never need to
// exclude each other before the atomic step (link or rename) that publishes their file.
std::string UniqueTempName(std::string_view stem) {
  static std::atomic<uint64_t> counter{0};
  return std::string(stem) + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
}

Status FsyncDirectory(const fs::path& dir) {
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return Status::IoError("open('" + dir.string() + "') failed", errno);
  const int rc = ::fsync(dfd);
  const int err = errno;
  ::close(dfd);
  if (rc != 0) return Status::IoError("fsync('" + dir.string() + "') failed", err);
  return Status::Ok();
}

// A lock's generation numbers in its directory (file names made of digits only); an absent
// directory has none.
Result<std::vector<uint64_t>> ListGenerations(const fs::path& dir) {
  std::vector<uint64_t> generations;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return generations;
    return Status::IoError("opendir('" + dir.string() + "') failed", errno);
  }
  while (dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    uint64_t g = 0;
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        ParseNumber(name, &g)) {
      generations.push_back(g);
    }
  }
  ::closedir(d);
  std::sort(generations.begin(), generations.end());
  return generations;
}

}  // namespace

CoordinationFileBackend::CoordinationFileBackend(Runtime& runtime, fs::path dir)
    : runtime_(runtime), dir_(std::move(dir)), boot_id_(ReadBootId()) {}

Status CoordinationFileBackend::Init() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::IoError("file backend: cannot create directory '" + dir_.string() + "'", ec.value());
  if (::access(dir_.c_str(), W_OK | X_OK) != 0) {
    return Status::IoError("file backend: directory '" + dir_.string() + "' is not writable", errno);
  }
  RemoveAbandonedTempFiles();
  return Status::Ok();
}

void CoordinationFileBackend::RemoveAbandonedTempFiles() const {
  // A writer killed between writing its temp file and publishing it leaves the file behind. No
  // call keeps one for an hour, so older ones go (by age, not by pid: a pid may be another pid
  // namespace's).
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(1);
  auto sweep = [&](const fs::path& dir) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::error_code stat_ec;
      if (e.path().filename().string().find(".tmp.") != std::string::npos &&
          fs::last_write_time(e.path(), stat_ec) < cutoff && !stat_ec) {
        fs::remove(e.path(), stat_ec);
      }
    }
  };
  sweep(dir_);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (e.is_directory(ec) && e.path().extension() == ".gens") sweep(e.path());
  }
}

Result<fs::path> CoordinationFileBackend::EntryPath(char kind, std::string_view key) const {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey(kind == 'L' ? "lock key" : "key", key));
  std::string name = std::string(1, kind) + "." + EscapeFileName(key);
  if (name.size() > kMaxFileNameBytes) {
    return Status::InvalidArgument("key '" + std::string(key.substr(0, 40)) + "…' is too long for the file backend (" +
                                   std::to_string(name.size()) + " bytes escaped, at most " +
                                   std::to_string(kMaxFileNameBytes) + ")");
  }
  return dir_ / name;
}

Result<std::optional<CoordinationFileBackend::Record>> CoordinationFileBackend::Read(const fs::path& path) const {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<Record>();
    return Status::IoError("open('" + path.string() + "') failed", errno);
  }
  std::string text;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::IoError("read('" + path.string() + "') failed", err);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxValueBytes + 4096) break;
  }
  ::close(fd);
  auto corrupt = [&](std::string_view what) {
    return Status(StatusCode::kIoError, "file backend: '" + path.string() + "' is corrupt: " + std::string(what));
  };
  Record r;
  std::string_view t = text;
  std::string_view f;
  if (t.substr(0, kMagic.size() + 1) != std::string(kMagic) + "\n") return corrupt("bad magic line");
  t.remove_prefix(kMagic.size() + 1);
  if (!Field(t, "boot", &f)) return corrupt("no boot line");
  r.boot_id = std::string(f);
  if (!Field(t, "expiry", &f)) return corrupt("no expiry line");
  if (f != "-") {
    if (!ParseNumber(f, &r.expiry_mono_ns)) return corrupt("bad expiry");
    r.has_expiry = true;
  }
  if (!Field(t, "holder", &f)) return corrupt("no holder line");
  r.holder = std::string(f);
  if (!Field(t, "token", &f) || !ParseNumber(f, &r.token)) return corrupt("bad token line");
  size_t len = 0;
  if (!Field(t, "value", &f) || !ParseNumber(f, &len) || len != t.size()) return corrupt("bad value length");
  r.value = std::string(t);
  r.exists = true;
  return std::optional<Record>(std::move(r));
}

Result<std::string> CoordinationFileBackend::WriteTemp(const fs::path& dir, std::string_view stem, const Record& r,
                                                       bool durable) const {
  std::string text(kMagic);
  text += "\nboot " + boot_id_ + "\nexpiry " + (r.has_expiry ? std::to_string(r.expiry_mono_ns) : "-") +
          "\nholder " + r.holder + "\ntoken " + std::to_string(r.token) + "\nvalue " + std::to_string(r.value.size()) +
          "\n";
  text += r.value;
  const std::string tmp = (dir / UniqueTempName(stem)).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("open('" + tmp + "') failed", errno);
  Status s = WriteAll(fd, text, tmp);
  if (s.ok() && durable && ::fsync(fd) != 0) s = Status::IoError("fsync('" + tmp + "') failed", errno);
  ::close(fd);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return tmp;
}

bool CoordinationFileBackend::Live(const Record& r, MonoTime now) const {
  if (!r.exists || r.boot_id != boot_id_) return false;
  return !r.has_expiry || now.time_since_epoch().count() < r.expiry_mono_ns;
}

Result<CoordinationFileBackend::LockState> CoordinationFileBackend::ReadLock(const fs::path& entry) const {
  const fs::path gens = GenerationsDir(entry);
  // A generation read between listing and opening may have been removed as superseded: list again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto listed = ListGenerations(gens);
    if (!listed.ok()) return listed.status();
    LockState state;
    state.generations = std::move(*listed);
    // Generation 0 is the single file of a version before generations (kept readable on upgrade).
    const fs::path path = state.newest() == 0 ? entry : gens / std::to_string(state.newest());
    auto r = Read(path);
    if (!r.ok()) return r.status();
    if (r->has_value()) {
      state.record = std::move(**r);
      return state;
    }
    if (state.newest() == 0) {
      // No generation and no old-format file: a fresh lock, unless the first generation (which
      // supersedes the old file) appeared meanwhile.
      auto again = ListGenerations(gens);
      if (!again.ok()) return again.status();
      if (again->empty()) return state;
    }
  }
  return Status::IoError("file backend: lock '" + entry.string() + "' changed under every read (100 tries)", EAGAIN);
}

Result<CoordinationFileBackend::Publish> CoordinationFileBackend::PublishLock(const fs::path& entry,
                                                                             const LockState& seen,
                                                                             const Record& next) const {
  const fs::path gens = GenerationsDir(entry);
  if (seen.generations.empty()) {
    std::error_code ec;
    if (fs::create_directory(gens, ec)) KVCHAOS_RETURN_IF_ERROR(FsyncDirectory(dir_));
    if (ec) return Status::IoError("file backend: cannot create directory '" + gens.string() + "'", ec.value());
  }
  auto tmp = WriteTemp(gens, "next", next, /*durable=*/true);  // a token must never be handed out twice
  if (!tmp.ok()) return tmp.status();
  const uint64_t mine = seen.newest() + 1;
  const fs::path target = gens / std::to_string(mine);
  // link(2) fails when the name exists: of all calls that read generation g, one publishes g+1.
  const int rc = ::link(tmp->c_str(), target.c_str());
  const int err = errno;
  ::unlink(tmp->c_str());
  if (rc != 0) {
    if (err == EEXIST) return Publish{};
    return Status::IoError("link('" + *tmp + "', '" + target.string() + "') failed", err);
  }
  KVCHAOS_RETURN_IF_ERROR(FsyncDirectory(gens));
  // A caller that read long ago (a process stopped between read and publish) may have linked a
  // generation that was already superseded and removed; a newer generation then exists, and the
  // publish counts as lost. Superseded generations can only be removed once two newer ones
  // exist, so the newest is always there to be seen.
  auto now_listed = ListGenerations(gens);
  if (!now_listed.ok()) return now_listed.status();
  if (now_listed->empty() || now_listed->back() != mine) {
    ::unlink(target.c_str());
    return Publish{.won = false, .linked = true};
  }
  // Keep this generation and the one before (a reader may be opening it); drop older ones.
  for (uint64_t g : *now_listed) {
    if (g + 1 < mine) ::unlink((gens / std::to_string(g)).c_str());
  }
  if (mine >= 2) ::unlink(entry.c_str());  // the old-format file, superseded by generation 1
  return Publish{.won = true};
}

Result<CoordinationFileBackend::Record> CoordinationFileBackend::UpdateLock(std::string_view key, MonoTime deadline,
                                                                            const LockDecision& decide) {
  auto entry = EntryPath('L', key);
  if (!entry.ok()) return entry.status();
  bool overtaken = false;
  for (int attempt = 1;; ++attempt) {
    const MonoTime now = runtime_.Now();
    auto state = ReadLock(*entry);
    if (!state.ok()) return state.status();
    auto next = decide(state->record, now, overtaken);
    if (!next.ok()) return next.status();
    if (!next->has_value()) return std::move(state->record);
    if (before_publish_) before_publish_();
    auto published = PublishLock(*entry, *state, **next);
    if (!published.ok()) return published.status();
    if (published->won) return std::move(**next);
    overtaken = overtaken || published->linked;
    // Another call published first: decide again on what it wrote.
    if (runtime_.Now() >= deadline) {
      return Status::Timeout("lock '" + std::string(key) + "' in " + Describe() + " changed under each of " +
                             std::to_string(attempt) + " updates before the call's deadline");
    }
  }
}

Status CoordinationFileBackend::CheckHeld(const Record& r, std::string_view key, std::string_view holder,
                                          MonoTime now) const {
  if (r.holder != holder || !Live(r, now)) {
    return Status(StatusCode::kLockLost,
                  "lock '" + std::string(key) + "' is not held by '" + std::string(holder) + "'");
  }
  return Status::Ok();
}

Result<LockGrant> CoordinationFileBackend::TryLock(std::string_view key, std::string_view holder, Duration lease,
                                                   MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("lease", lease));
  auto granted = UpdateLock(key, deadline, [&](const Record& r, MonoTime now, bool) -> Result<std::optional<Record>> {
    if (!r.holder.empty() && Live(r, now) && r.holder != holder) {
      return Status(StatusCode::kAlreadyExists, "lock '" + std::string(key) + "' is held by '" + r.holder + "'");
    }
    Record next = r;
    next.holder = std::string(holder);
    next.has_expiry = true;
    next.expiry_mono_ns = (now + lease).time_since_epoch().count();
    next.token = r.token + 1;
    next.value.clear();
    return std::optional<Record>(std::move(next));
  });
  if (!granted.ok()) return granted.status();
  return LockGrant{granted->token};
}

Result<FencingToken> CoordinationFileBackend::RaiseTokenFloor(std::string_view key, std::string_view holder,
                                                              FencingToken floor, MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateTokenFloor(floor));
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  auto raised = UpdateLock(key, deadline, [&](const Record& r, MonoTime now, bool) -> Result<std::optional<Record>> {
    KVCHAOS_RETURN_IF_ERROR(CheckHeld(r, key, holder, now));
    Record next = r;
    next.token = std::max(r.token, floor) + 1;
    return std::optional<Record>(std::move(next));
  });
  if (!raised.ok()) return raised.status();
  return raised->token;
}

Status CoordinationFileBackend::RenewLock(std::string_view key, std::string_view holder, Duration lease,
                                          MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("lease", lease));
  return UpdateLock(key, deadline, [&](const Record& r, MonoTime now, bool) -> Result<std::optional<Record>> {
           KVCHAOS_RETURN_IF_ERROR(CheckHeld(r, key, holder, now));
           Record next = r;
           next.expiry_mono_ns = (now + lease).time_since_epoch().count();
           return std::optional<Record>(std::move(next));
         })
      .status();
}

Status CoordinationFileBackend::Unlock(std::string_view key, std::string_view holder, MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  return UpdateLock(key, deadline,
                    [&](const Record& r, MonoTime now, bool overtaken) -> Result<std::optional<Record>> {
                      // Once overtaken, the unlock may well have been published and the lock
                      // taken since (a waiting campaigner is quick): the lock is not ours, done.
                      if (overtaken && (r.holder != holder || !Live(r, now))) return std::optional<Record>();
                      KVCHAOS_RETURN_IF_ERROR(CheckHeld(r, key, holder, now));
                      Record next = r;
                      next.holder.clear();
                      next.has_expiry = false;
                      return std::optional<Record>(std::move(next));
                    })
      .status();
}

Result<LockHolderInfo> CoordinationFileBackend::GetLockHolder(std::string_view key, MonoTime /*deadline*/) {
  auto entry = EntryPath('L', key);
  if (!entry.ok()) return entry.status();
  auto state = ReadLock(*entry);
  if (!state.ok()) return state.status();
  const Record& r = state->record;
  LockHolderInfo info;
  info.token = r.token;
  const MonoTime now = runtime_.Now();
  if (!r.holder.empty() && Live(r, now)) {
    info.holder = r.holder;
    info.remaining_ttl = Duration(r.expiry_mono_ns - now.time_since_epoch().count());
  }
  return info;
}

Status CoordinationFileBackend::SetValueInternal(std::string_view key, std::string_view value, bool has_expiry,
                                                 Duration ttl) {
  auto path = EntryPath('V', key);
  if (!path.ok()) return path.status();
  if (has_expiry) KVCHAOS_RETURN_IF_ERROR(ValidatePositive("ttl", ttl));
  if (value.size() > kMaxValueBytes) {
    return Status::InvalidArgument("value of key '" + std::string(key) + "' is " + std::to_string(value.size()) +
                                   " bytes; the file backend keeps at most " + std::to_string(kMaxValueBytes));
  }
  Record r;
  r.exists = true;
  r.has_expiry = has_expiry;
  r.expiry_mono_ns = has_expiry ? (runtime_.Now() + ttl).time_since_epoch().count() : 0;
  r.value = std::string(value);
  // A put replaces whatever is there, so the rename needs no exclusion: the last rename wins.
  auto tmp = WriteTemp(dir_, path->filename().string(), r, /*durable=*/false);
  if (!tmp.ok()) return tmp.status();
  if (::rename(tmp->c_str(), path->c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp->c_str());
    return Status::IoError("rename('" + *tmp + "') failed", err);
  }
  return Status::Ok();
}

Status CoordinationFileBackend::SetValue(std::string_view key, std::string_view value) {
  return SetValueInternal(key, value, false, Duration::zero());
}

Status CoordinationFileBackend::SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) {
  return SetValueInternal(key, value, true, ttl);
}

Result<std::string> CoordinationFileBackend::GetValue(std::string_view key) {
  auto path = EntryPath('V', key);
  if (!path.ok()) return path.status();
  auto r = Read(*path);
  if (!r.ok()) return r.status();
  if (!r->has_value() || !Live(**r, runtime_.Now())) {
    return Status::NotFound("key '" + std::string(key) + "' has no value");
  }
  return std::move((*r)->value);
}

Status CoordinationFileBackend::DeleteValue(std::string_view key) {
  auto path = EntryPath('V', key);
  if (!path.ok()) return path.status();
  if (::unlink(path->c_str()) != 0 && errno != ENOENT) {
    return Status::IoError("unlink('" + path->string() + "') failed", errno);
  }
  return Status::Ok();
}

Result<std::vector<KeyValue>> CoordinationFileBackend::ListValues(std::string_view prefix) {
  DIR* d = ::opendir(dir_.c_str());
  if (d == nullptr) return Status::IoError("opendir('" + dir_.string() + "') failed", errno);
  std::vector<std::string> keys;
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name.size() < 2 || name.substr(0, 2) != "V.") continue;
    name.remove_prefix(2);
    if (name.find('.') != std::string_view::npos) continue;  // temp files (and the .guard files of older versions)
    std::string key;
    if (!UnescapeFileName(name, &key)) continue;
    if (key.compare(0, prefix.size(), prefix) == 0) keys.push_back(std::move(key));
  }
  ::closedir(d);
  std::sort(keys.begin(), keys.end());  // readdir order is the file system's, not ours
  std::vector<KeyValue> out;
  for (auto& key : keys) {
    auto v = GetValue(key);
    if (v.ok()) {
      out.push_back({std::move(key), std::move(*v)});
    } else if (v.status().code() != StatusCode::kNotFound) {
      return v.status();
    }
  }
  return out;
}

}  // namespace kvchaos::election
