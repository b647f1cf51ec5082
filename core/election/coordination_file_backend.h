// CoordinationFileBackend: locks and values as small files in one directory, correct across the
// processes of one host, and no process can block another: nothing is held across a call.
//  - A lock is a directory "L.<key>.gens" of generations, files named 1, 2, 3, ...; the newest is
//    the lock's state. An update reads generation g, decides, writes its record to a temp file of
//    its own and link(2)s it as g+1; link fails when g+1 exists, so of all calls that read g
//    exactly one wins, and the others read again and decide anew. A process stopped anywhere in a
//    call (SIGSTOP, a long GC pause) holds nothing: the others go on, and when it resumes its
//    publish fails because a newer generation exists (also when the one it would create was
//    already removed: it looks again after linking). Every generation is fsynced with its
//    directory before the call returns; the two newest are kept.
//  - A value is one file "V.<key>" replaced by rename(2) from a temp file of its own (a put needs
//    no exclusion: the last rename wins); not fsynced.
// Expiry is stored as a CLOCK_MONOTONIC deadline (the real Runtime's Now(), shared by every
// process of a host) together with the kernel boot id.
//
// What it does NOT promise:
//  - Several hosts: the per-host monotonic clock (and link/rename over NFS) make it unsafe there.
//  - Survival of a reboot for holdings and TTLs: a file from another boot (different boot id)
//    counts as expired. Fencing tokens do survive.
//  - Durability of values after a power loss.
//  - Use under the simulator's virtual time across "processes": deadlines are only comparable
//    when every process reads the same monotonic clock.
//  - Keys whose escaped file name exceeds 200 bytes (InvalidArgument).
//  - Sharing a directory with a kvchaos from before generations (it used one file "L.<key>" under
//    an flock): such a file is read as generation 0 on upgrade, but the two must not run at once.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/election/coordination_backend.h"

namespace kvchaos::election {

class CoordinationFileBackend final : public CoordinationBackend {
 public:
  CoordinationFileBackend(Runtime& runtime, std::filesystem::path dir);

  // Creates the directory (with parents), checks that it is writable and removes temp files
  // abandoned over an hour ago by writers that were killed.
  Status Init() override;
  Result<LockGrant> TryLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override;
  Status RenewLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override;
  Status Unlock(std::string_view key, std::string_view holder, MonoTime deadline) override;
  Result<LockHolderInfo> GetLockHolder(std::string_view key, MonoTime deadline) override;
  Result<FencingToken> RaiseTokenFloor(std::string_view key, std::string_view holder, FencingToken floor,
                                       MonoTime deadline) override;
  Status SetValue(std::string_view key, std::string_view value) override;
  Status SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) override;
  Result<std::string> GetValue(std::string_view key) override;
  Status DeleteValue(std::string_view key) override;
  Result<std::vector<KeyValue>> ListValues(std::string_view prefix) override;
  std::string Describe() const override { return "file://" + dir_.string(); }

  // Runs `hook` inside every lock update, after it has read and decided and before it publishes:
  // where a process stopped mid-call would be (tests only).
  void SetBeforePublishHookForTest(std::function<void()> hook) { before_publish_ = std::move(hook); }

  // One entry as stored (exposed for tests).
  struct Record {
    bool exists = false;
    std::string boot_id;
    bool has_expiry = false;
    int64_t expiry_mono_ns = 0;  // CLOCK_MONOTONIC deadline
    std::string holder;          // locks
    FencingToken token = 0;      // locks: newest granted token
    std::string value;           // values
  };

 private:
  // A lock as read: its generations and the newest one's record (newest() 0: no generation yet,
  // the record read from the old-format file if there is one).
  struct LockState {
    std::vector<uint64_t> generations;  // as listed, ascending
    Record record;
    uint64_t newest() const { return generations.empty() ? 0 : generations.back(); }
  };
  // Turns the lock's current record into the next one to publish, nullopt when the call is done
  // without publishing, or an error that ends the call. `overtaken`: this call linked a generation
  // already and then saw a newer one, so its publish either took effect and a quick successor
  // decided on it, or was stale (read before a pause); the two cannot be told apart.
  using LockDecision =
      std::function<Result<std::optional<Record>>(const Record& current, MonoTime now, bool overtaken)>;
  // Read, decide, publish, again while another call publishes first, until `deadline`; returns
  // the record published (or the current one when the decision published nothing).
  Result<Record> UpdateLock(std::string_view key, MonoTime deadline, const LockDecision& decide);
  Result<LockState> ReadLock(const std::filesystem::path& entry) const;
  // Publishes `next` as generation seen.newest() + 1.
  struct Publish {
    bool won = false;     // it is the lock's state (or was, until a successor decided on it)
    bool linked = false;  // lost, but after linking: a newer generation was there when it looked
  };
  Result<Publish> PublishLock(const std::filesystem::path& entry, const LockState& seen, const Record& next) const;
  static std::filesystem::path GenerationsDir(const std::filesystem::path& entry) {
    return entry.string() + ".gens";
  }
  Status CheckHeld(const Record& r, std::string_view key, std::string_view holder, MonoTime now) const;
  Result<std::filesystem::path> EntryPath(char kind, std::string_view key) const;
  // The record in `path`; nullopt when there is no such file.
  Result<std::optional<Record>> Read(const std::filesystem::path& path) const;
  // Writes `record` to a new temp file in `dir` named after `stem`; returns its path.
  Result<std::string> WriteTemp(const std::filesystem::path& dir, std::string_view stem, const Record& record,
                                bool durable) const;
  bool Live(const Record& r, MonoTime now) const;
  Status SetValueInternal(std::string_view key, std::string_view value, bool has_expiry, Duration ttl);
  void RemoveAbandonedTempFiles() const;

  Runtime& runtime_;
  const std::filesystem::path dir_;
  std::string boot_id_;
  std::function<void()> before_publish_;
};

// "%"-escapes bytes outside [A-Za-z0-9_:-] (so also '.' and '/'): any key is one file name,
// and a '.' in a directory entry always starts a suffix (".gens", ".tmp.*").
std::string EscapeFileName(std::string_view key);
// Inverse of EscapeFileName; false on a malformed name.
bool UnescapeFileName(std::string_view name, std::string* key);

}  // namespace kvchaos::election
