// File coordination backend (see the header for what it promises and what it does not).
#include "core/election/coordination_file_backend.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

// An flock(2) on "<entry>.guard", taken with bounded retries through the runtime.
class CoordinationFileBackend::Guard {
 public:
  static Result<std::unique_ptr<Guard>> Take(Runtime& runtime, const fs::path& entry, MonoTime give_up) {
    const std::string path = entry.string() + ".guard";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Status::IoError("open('" + path + "') failed", errno);
    auto guard = std::unique_ptr<Guard>(new Guard(fd));
    const MonoTime start = runtime.Now();
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) return Status::IoError("flock('" + path + "') failed", errno);
      if (runtime.Now() >= give_up) {
        return Status::Timeout("flock('" + path + "') still contended after " +
                               std::to_string(ToMillis(runtime.Now() - start)) +
                               " ms (the guard timeout or the call's deadline; another process stuck inside a call?)");
      }
      runtime.SleepUntil(std::min(runtime.Now() + Millis(1), give_up));
    }
    return guard;
  }
  ~Guard() { ::close(fd_); }  // closing releases the flock
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  explicit Guard(int fd) : fd_(fd) {}
  int fd_;
};

CoordinationFileBackend::CoordinationFileBackend(Runtime& runtime, fs::path dir, Duration guard_timeout)
    : runtime_(runtime), dir_(std::move(dir)), guard_timeout_(guard_timeout), boot_id_(ReadBootId()) {}

Status CoordinationFileBackend::Init() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::IoError("file backend: cannot create directory '" + dir_.string() + "'", ec.value());
  if (::access(dir_.c_str(), W_OK | X_OK) != 0) {
    return Status::IoError("file backend: directory '" + dir_.string() + "' is not writable", errno);
  }
  return Status::Ok();
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

Result<CoordinationFileBackend::Record> CoordinationFileBackend::Read(const fs::path& path) const {
  Record r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return r;
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
  return r;
}

Status CoordinationFileBackend::Write(const fs::path& path, const Record& r, bool durable) const {
  std::string text(kMagic);
  text += "\nboot " + boot_id_ + "\nexpiry " + (r.has_expiry ? std::to_string(r.expiry_mono_ns) : "-") +
          "\nholder " + r.holder + "\ntoken " + std::to_string(r.token) + "\nvalue " + std::to_string(r.value.size()) +
          "\n";
  text += r.value;
  const std::string tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("open('" + tmp + "') failed", errno);
  Status s = WriteAll(fd, text, tmp);
  if (s.ok() && durable && ::fsync(fd) != 0) s = Status::IoError("fsync('" + tmp + "') failed", errno);
  ::close(fd);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::IoError("rename('" + tmp + "') failed", err);
  }
  if (durable) {
    const int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return Status::IoError("open('" + dir_.string() + "') failed", errno);
    const int rc = ::fsync(dfd);
    const int err = errno;
    ::close(dfd);
    if (rc != 0) return Status::IoError("fsync('" + dir_.string() + "') failed", err);
  }
  return Status::Ok();
}

bool CoordinationFileBackend::Live(const Record& r, MonoTime now) const {
  if (!r.exists || r.boot_id != boot_id_) return false;
  return !r.has_expiry || now.time_since_epoch().count() < r.expiry_mono_ns;
}

MonoTime CoordinationFileBackend::GuardGiveUp(MonoTime deadline) {
  return std::min(deadline, runtime_.Now() + guard_timeout_);
}

Result<LockGrant> CoordinationFileBackend::TryLock(std::string_view key, std::string_view holder, Duration lease,
                                                   MonoTime deadline) {
  auto path = EntryPath('L', key);
  if (!path.ok()) return path.status();
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("lease", lease));
  auto guard = Guard::Take(runtime_, *path, GuardGiveUp(deadline));
  if (!guard.ok()) return guard.status();
  auto r = Read(*path);
  if (!r.ok()) return r.status();
  const MonoTime now = runtime_.Now();
  if (!r->holder.empty() && Live(*r, now) && r->holder != holder) {
    return Status(StatusCode::kAlreadyExists, "lock '" + std::string(key) + "' is held by '" + r->holder + "'");
  }
  Record next = *r;
  next.holder = std::string(holder);
  next.has_expiry = true;
  next.expiry_mono_ns = (now + lease).time_since_epoch().count();
  next.token = r->token + 1;
  next.value.clear();
  KVCHAOS_RETURN_IF_ERROR(Write(*path, next, /*durable=*/true));  // a token must never be handed out twice
  return LockGrant{next.token};
}

Result<FencingToken> CoordinationFileBackend::RaiseTokenFloor(std::string_view key, std::string_view holder,
                                                              FencingToken floor, MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidateTokenFloor(floor));
  auto held = TakeHeldLock(key, holder, deadline);
  if (!held.ok()) return held.status();
  Record next = held->record;
  next.token = std::max(held->record.token, floor) + 1;
  KVCHAOS_RETURN_IF_ERROR(Write(held->path, next, /*durable=*/true));  // as TryLock: never hand a token out twice
  return next.token;
}

Result<CoordinationFileBackend::HeldLock> CoordinationFileBackend::TakeHeldLock(std::string_view key,
                                                                                std::string_view holder,
                                                                                MonoTime deadline) {
  auto path = EntryPath('L', key);
  if (!path.ok()) return path.status();
  KVCHAOS_RETURN_IF_ERROR(ValidateKey("lock holder", holder));
  auto guard = Guard::Take(runtime_, *path, GuardGiveUp(deadline));
  if (!guard.ok()) return guard.status();
  auto r = Read(*path);
  if (!r.ok()) return r.status();
  const MonoTime now = runtime_.Now();
  if (r->holder != holder || !Live(*r, now)) {
    return Status(StatusCode::kLockLost, "lock '" + std::string(key) + "' is not held by '" + std::string(holder) + "'");
  }
  return HeldLock{std::move(*path), std::move(*guard), std::move(*r), now};
}

Status CoordinationFileBackend::RenewLock(std::string_view key, std::string_view holder, Duration lease,
                                          MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(ValidatePositive("lease", lease));
  auto held = TakeHeldLock(key, holder, deadline);
  if (!held.ok()) return held.status();
  Record next = held->record;
  next.expiry_mono_ns = (held->now + lease).time_since_epoch().count();
  return Write(held->path, next, /*durable=*/false);
}

Status CoordinationFileBackend::Unlock(std::string_view key, std::string_view holder, MonoTime deadline) {
  auto held = TakeHeldLock(key, holder, deadline);
  if (!held.ok()) return held.status();
  Record next = held->record;
  next.holder.clear();
  next.has_expiry = false;
  return Write(held->path, next, /*durable=*/false);
}

Result<LockHolderInfo> CoordinationFileBackend::GetLockHolder(std::string_view key, MonoTime /*deadline*/) {
  auto path = EntryPath('L', key);
  if (!path.ok()) return path.status();
  // No guard: the data file is replaced atomically, so a reader sees the old or the new record.
  auto r = Read(*path);
  if (!r.ok()) return r.status();
  LockHolderInfo info;
  info.token = r->token;
  const MonoTime now = runtime_.Now();
  if (!r->holder.empty() && Live(*r, now)) {
    info.holder = r->holder;
    info.remaining_ttl = Duration(r->expiry_mono_ns - now.time_since_epoch().count());
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
  auto guard = Guard::Take(runtime_, *path, GuardGiveUp(kNoDeadline));
  if (!guard.ok()) return guard.status();
  Record r;
  r.exists = true;
  r.has_expiry = has_expiry;
  r.expiry_mono_ns = has_expiry ? (runtime_.Now() + ttl).time_since_epoch().count() : 0;
  r.value = std::string(value);
  return Write(*path, r, /*durable=*/false);
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
  if (!Live(*r, runtime_.Now())) return Status::NotFound("key '" + std::string(key) + "' has no value");
  return std::move(r->value);
}

Status CoordinationFileBackend::DeleteValue(std::string_view key) {
  auto path = EntryPath('V', key);
  if (!path.ok()) return path.status();
  auto guard = Guard::Take(runtime_, *path, GuardGiveUp(kNoDeadline));
  if (!guard.ok()) return guard.status();
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
    if (name.find('.') != std::string_view::npos) continue;  // .guard / .tmp siblings
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
