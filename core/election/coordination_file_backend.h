// CoordinationFileBackend: locks and values as small files in one directory, correct across the
// processes of one host. Each entry is a data file replaced atomically (write temp, rename) while
// an flock(2) on a sibling ".guard" file serialises every read-modify-write, so two processes can
// never both win a lock or hand out the same fencing token. Expiry is stored in the file as a
// CLOCK_MONOTONIC deadline (the real Runtime's Now(), shared by every process of a host) together
// with the kernel boot id.
//
// What it does NOT promise:
//  - Several hosts: flock over NFS/CIFS and the per-host monotonic clock make it unsafe there.
//  - Survival of a reboot for holdings and TTLs: a file from another boot (different boot id)
//    counts as expired. Fencing tokens do survive (the grant is fsynced with its directory).
//  - Durability of renewals and values after a power loss (they are not fsynced).
//  - Use under the simulator's virtual time across "processes": deadlines are only comparable
//    when every process reads the same monotonic clock.
//  - Keys whose escaped file name exceeds 200 bytes (InvalidArgument).
// A contended guard is retried every millisecond through the Runtime for up to `guard_timeout`
// (a process SIGSTOPped inside a call would otherwise block everyone) or until a lock call's
// deadline, whichever comes first, then kTimeout.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "core/common/runtime.h"
#include "core/election/coordination_backend.h"

namespace kvchaos::election {

class CoordinationFileBackend final : public CoordinationBackend {
 public:
  CoordinationFileBackend(Runtime& runtime, std::filesystem::path dir, Duration guard_timeout = Millis(2000));

  // Creates the directory (with parents) and checks that it is writable.
  Status Init() override;
  Result<LockGrant> TryLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override;
  Status RenewLock(std::string_view key, std::string_view holder, Duration lease, MonoTime deadline) override;
  Status Unlock(std::string_view key, std::string_view holder, MonoTime deadline) override;
  // Reads without the guard (the data file is replaced atomically), so it never waits.
  Result<LockHolderInfo> GetLockHolder(std::string_view key, MonoTime deadline) override;
  // Under the entry's flock, like TryLock; the raised token is fsynced before it is returned.
  Result<FencingToken> RaiseTokenFloor(std::string_view key, std::string_view holder, FencingToken floor,
                                       MonoTime deadline) override;
  Status SetValue(std::string_view key, std::string_view value) override;
  Status SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) override;
  Result<std::string> GetValue(std::string_view key) override;
  Status DeleteValue(std::string_view key) override;
  Result<std::vector<KeyValue>> ListValues(std::string_view prefix) override;
  std::string Describe() const override { return "file://" + dir_.string(); }

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
  class Guard;
  // A lock entry that `holder` holds (live), read under its guard, which stays taken until the
  // caller drops this; kLockLost when the lock is free, expired or someone else's.
  struct HeldLock {
    std::filesystem::path path;
    std::unique_ptr<Guard> guard;
    Record record;
    MonoTime now;  // when the holding was checked
  };
  Result<HeldLock> TakeHeldLock(std::string_view key, std::string_view holder, MonoTime deadline);
  // When a guard taken now for a call with `deadline` is given up.
  MonoTime GuardGiveUp(MonoTime deadline);
  Result<std::filesystem::path> EntryPath(char kind, std::string_view key) const;
  Result<Record> Read(const std::filesystem::path& path) const;
  Status Write(const std::filesystem::path& path, const Record& record, bool durable) const;
  bool Live(const Record& r, MonoTime now) const;
  Status SetValueInternal(std::string_view key, std::string_view value, bool has_expiry, Duration ttl);

  Runtime& runtime_;
  const std::filesystem::path dir_;
  const Duration guard_timeout_;
  std::string boot_id_;
};

// "%"-escapes bytes outside [A-Za-z0-9_:-] (so also '.' and '/'): any key is one file name,
// and a '.' in a directory entry always starts a suffix (".guard", ".tmp").
std::string EscapeFileName(std::string_view key);
// Inverse of EscapeFileName; false on a malformed name.
bool UnescapeFileName(std::string_view name, std::string* key);

}  // namespace kvchaos::election
