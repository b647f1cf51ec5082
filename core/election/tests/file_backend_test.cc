// CoordinationFileBackend: the lock and value contract in one process, then mutual exclusion and
// unique fencing tokens across real processes (fork) sharing one directory.
#include "core/election/coordination_file_backend.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <thread>

#include "core/common/real_runtime.h"
#include "core/election/tests/manual_runtime.h"
#include "core/election/tests/coordination_contract.h"
#include "testing/temp_dir.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;
using kvchaos::testing::TempDir;
using testing::ManualRuntime;

TEST(FileNameEscapeTest, RoundTripsAndKeepsSuffixesUnambiguous) {
  for (std::string key : {"_TAIR_KVCM_LEADER_KEY", "a/b.c", "%41", "node:1_x", ".hidden"}) {
    const std::string name = EscapeFileName(key);
    EXPECT_EQ(name.find('/'), std::string::npos) << name;
    EXPECT_EQ(name.find('.'), std::string::npos) << name;
    std::string back;
    ASSERT_TRUE(UnescapeFileName(name, &back)) << name;
    EXPECT_EQ(back, key);
  }
  std::string out;
  EXPECT_FALSE(UnescapeFileName("abc%4", &out)) << "truncated escape accepted";
  EXPECT_FALSE(UnescapeFileName("a.b", &out));
}

TEST(FileBackendTest, LockExpiryTokensAndValues) {
  TempDir dir("kvchaos-filebackend");
  ManualRuntime rt;  // one process: the manual clock is the shared clock
  CoordinationFileBackend b(rt, dir.path() / "sub");
  ASSERT_TRUE(b.Init().ok());
  auto a = b.TryLock("L", "a", 1000ms, kNoDeadline);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->token, 1u);
  auto other = b.TryLock("L", "b", 1000ms, kNoDeadline);
  EXPECT_EQ(other.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(other.status().message().find("'a'"), std::string::npos);
  EXPECT_EQ(b.RenewLock("L", "b", 1000ms, kNoDeadline).code(), StatusCode::kLockLost);
  rt.Advance(600ms);
  ASSERT_TRUE(b.RenewLock("L", "a", 1000ms, kNoDeadline).ok());
  rt.Advance(600ms);
  auto h = b.GetLockHolder("L", kNoDeadline);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->holder, "a") << "renewal did not restart the lease";
  EXPECT_EQ(h->remaining_ttl, 400ms);
  rt.Advance(400ms);
  EXPECT_EQ(b.GetLockHolder("L", kNoDeadline)->holder, "") << "expired lock still held";
  auto g = b.TryLock("L", "b", 1000ms, kNoDeadline);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->token, 2u);
  EXPECT_EQ(b.Unlock("L", "a", kNoDeadline).code(), StatusCode::kLockLost);
  ASSERT_TRUE(b.Unlock("L", "b", kNoDeadline).ok());
  EXPECT_EQ(b.TryLock("L", "c", 1000ms, kNoDeadline)->token, 3u) << "token must survive Unlock";

  ASSERT_TRUE(b.SetValue("node/b", "two").ok());
  ASSERT_TRUE(b.SetValueWithTtl("node/a", std::string("bin\0ary\n", 8), 500ms).ok());
  ASSERT_TRUE(b.SetValue("other", "x").ok());
  auto list = b.ListValues("node/");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(*list, (std::vector<KeyValue>{{"node/a", std::string("bin\0ary\n", 8)}, {"node/b", "two"}}));
  rt.Advance(500ms);
  EXPECT_EQ(b.GetValue("node/a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(b.ListValues("node/")->size(), 1u);
  ASSERT_TRUE(b.DeleteValue("node/b").ok());
  ASSERT_TRUE(b.DeleteValue("node/b").ok());
  EXPECT_TRUE(b.ListValues("node/")->empty());
}

// A holder stopped between reading the lock and publishing its renewal (where a SIGSTOP or a
// long pause can catch a process) holds nothing: another process takes the expired lock, and
// the resumed renewal fails instead of overwriting the new holder. `takeover_updates` is how
// many generations the new holder publishes during the pause: 1 makes the stale publish collide
// with the taken name; 3 lets the generation it would create be removed as superseded first, so
// only the look after linking can tell it lost.
void StoppedRenewalIsOvertaken(int takeover_updates) {
  TempDir dir("kvchaos-filebackend");
  ManualRuntime rt;
  CoordinationFileBackend stopped(rt, dir.path());
  CoordinationFileBackend other(rt, dir.path());
  ASSERT_TRUE(stopped.Init().ok());
  ASSERT_TRUE(stopped.TryLock("L", "a", 1000ms, kNoDeadline).ok());
  FencingToken taken = 0;
  stopped.SetBeforePublishHookForTest([&] {
    if (taken != 0) return;  // only the first publish is "paused"
    rt.Advance(1500ms);      // a's lease runs out while it cannot act
    auto g = other.TryLock("L", "b", 60s, kNoDeadline);
    ASSERT_TRUE(g.ok()) << "the stopped holder blocked the takeover: " << g.status().ToString();
    taken = g->token;
    for (int i = 1; i < takeover_updates; ++i) ASSERT_TRUE(other.RenewLock("L", "b", 60s, kNoDeadline).ok());
  });
  const Status resumed = stopped.RenewLock("L", "a", 1000ms, kNoDeadline);
  EXPECT_EQ(resumed.code(), StatusCode::kLockLost)
      << "a renewal read before the takeover succeeded after it: " << resumed.ToString();
  auto h = other.GetLockHolder("L", kNoDeadline);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->holder, "b") << "the resumed renewal overwrote the new holder";
  EXPECT_EQ(h->token, taken);
  EXPECT_TRUE(other.RenewLock("L", "b", 60s, kNoDeadline).ok());
}

TEST(FileBackendTest, ARenewalStoppedBeforeItsPublishLosesToTheTakeover) { StoppedRenewalIsOvertaken(1); }

TEST(FileBackendTest, ARenewalStoppedWhileItsGenerationIsRemovedStillLoses) { StoppedRenewalIsOvertaken(3); }

// The same with real processes and signals: a child renews a short lease in a tight loop and is
// SIGSTOPped wherever it happens to be; the parent must take the lock over once the lease has run
// out, and keep it after the child resumes.
TEST(FileBackendTest, AProcessStoppedAnywhereInACallBlocksNoTakeover) {
  TempDir dir("kvchaos-filebackend");
  Runtime& rt = Runtime::Real();
  const pid_t child = ::fork();
  if (child == 0) {
    CoordinationFileBackend b(rt, dir.path());
    while (true) {
      if (!b.RenewLock("L", "child", 100ms, rt.Now() + 1s).ok()) (void)b.TryLock("L", "child", 100ms, rt.Now() + 1s);
    }
  }
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } reaper{child};
  CoordinationFileBackend parent(rt, dir.path());
  ASSERT_TRUE(parent.Init().ok());
  for (int round = 0; round < 15; ++round) {
    ASSERT_TRUE(testing::WaitFor([&] { return parent.GetLockHolder("L", kNoDeadline)->holder == "child"; }, 10s))
        << "round " << round << ": the child never took the lock";
    ::kill(child, SIGSTOP);
    Result<LockGrant> g = Status::Internal("not tried");
    const MonoTime give_up = rt.Now() + 3s;  // the child's lease is 100 ms
    while (rt.Now() < give_up && !(g = parent.TryLock("L", "parent", 60s, give_up)).ok()) rt.SleepFor(5ms);
    ::kill(child, SIGCONT);
    ASSERT_TRUE(g.ok()) << "round " << round << ": a stopped process blocked the takeover: " << g.status().ToString();
    rt.SleepFor(20ms);  // the child finishes the call it was stopped in
    auto h = parent.GetLockHolder("L", kNoDeadline);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_EQ(h->holder, "parent") << "round " << round << ": the resumed child overwrote the new holder";
    EXPECT_EQ(h->token, g->token);
    ASSERT_TRUE(parent.Unlock("L", "parent", kNoDeadline).ok());
  }
}

// A lock written by a version before generations (one file "L.<key>") keeps its token.
TEST(FileBackendTest, AnOldFormatLockFileIsReadAndSupersededWithItsToken) {
  TempDir dir("kvchaos-filebackend");
  ManualRuntime rt;
  CoordinationFileBackend b(rt, dir.path());
  ASSERT_TRUE(b.Init().ok());
  std::ofstream(dir.path() / "L.L") << "kvchaos-coordination 1\nboot x\nexpiry -\nholder \ntoken 41\nvalue 0\n";
  EXPECT_EQ(b.GetLockHolder("L", kNoDeadline)->token, 41u);
  auto g = b.TryLock("L", "a", 1000ms, kNoDeadline);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->token, 42u) << "the old file's token was not carried over";
  ASSERT_TRUE(b.RenewLock("L", "a", 1000ms, kNoDeadline).ok());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "L.L")) << "the superseded old-format file was kept";
  EXPECT_EQ(b.GetLockHolder("L", kNoDeadline)->holder, "a");
}

TEST(FileBackendTest, CoordinationContractAndTheRaisedTokenIsOnDisk) {
  TempDir dir("kvchaos-filebackend");
  ManualRuntime rt;
  {
    CoordinationFileBackend b(rt, dir.path());
    ASSERT_TRUE(b.Init().ok());
    testing::CheckCoordinationContract(b, [&](Duration d) { rt.Advance(d); });
  }
  // Another process (a new backend object over the same directory) sees the raised counter.
  CoordinationFileBackend reopened(rt, dir.path());
  auto holder = reopened.GetLockHolder("F", kNoDeadline);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  EXPECT_EQ(holder->token, (FencingToken{1} << 53) + 4) << "the raised token was not stored";
  rt.Advance(31s);
  EXPECT_EQ(reopened.RaiseTokenFloor("F", "b", 1, kNoDeadline).status().code(), StatusCode::kLockLost)
      << "raised an expired holding";
}

TEST(FileBackendTest, RecordFromAnotherBootCountsAsExpiredButKeepsItsToken) {
  TempDir dir("kvchaos-filebackend");
  ManualRuntime rt;
  CoordinationFileBackend b(rt, dir.path());
  ASSERT_TRUE(b.Init().ok());
  ASSERT_TRUE(b.TryLock("L", "a", 1000ms, kNoDeadline).ok());
  // Rewrite the boot id as if the lock were taken before a reboot.
  const auto path = dir.path() / "L.L.gens" / "1";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t p = text.find("boot ") + 5;
  text.replace(p, text.find('\n', p) - p, "another-boot");
  std::ofstream(path, std::ios::trunc) << text;
  EXPECT_EQ(b.GetLockHolder("L", kNoDeadline)->holder, "") << "a holding from another boot must not count";
  EXPECT_EQ(b.TryLock("L", "b", 1000ms, kNoDeadline)->token, 2u);
}

TEST(FileBackendTest, CorruptFileAndBadKeysGiveClearErrors) {
  TempDir dir("kvchaos-filebackend");
  ManualRuntime rt;
  CoordinationFileBackend b(rt, dir.path());
  ASSERT_TRUE(b.Init().ok());
  std::ofstream(dir.path() / "L.L") << "garbage";
  auto h = b.GetLockHolder("L", kNoDeadline);
  EXPECT_EQ(h.status().code(), StatusCode::kIoError);
  EXPECT_NE(h.status().message().find("L.L"), std::string::npos) << h.status().message();
  EXPECT_FALSE(b.TryLock("L", "a", 1000ms, kNoDeadline).ok()) << "a corrupt lock file must not be overwritten silently";
  EXPECT_EQ(b.SetValue(std::string(300, 'k'), "v").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.SetValue("a b", "v").code(), StatusCode::kInvalidArgument);
}

TEST(FileBackendTest, InitFailsOnAnUnwritablePath) {
  TempDir dir("kvchaos-filebackend");
  std::ofstream(dir.path() / "file") << "x";
  CoordinationFileBackend b(Runtime::Real(), dir.path() / "file" / "sub");
  Status s = b.Init();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("file/sub"), std::string::npos) << s.ToString();
}

// Runs `fn` in a child process; returns its exit code (the child never returns into gtest).
int RunInChild(const std::function<int()>& fn) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(fn());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(FileBackendTest, TwoProcessesSeeOneHolder) {
  TempDir dir("kvchaos-filebackend");
  CoordinationFileBackend parent(Runtime::Real(), dir.path());
  ASSERT_TRUE(parent.Init().ok());
  ASSERT_TRUE(parent.TryLock("L", "parent", 60s, kNoDeadline).ok());
  const int rc = RunInChild([&] {
    CoordinationFileBackend child(Runtime::Real(), dir.path());
    auto g = child.TryLock("L", "child", 60s, kNoDeadline);
    if (g.ok()) return 1;                                               // stole a held lock
    if (g.status().code() != StatusCode::kAlreadyExists) return 2;
    if (child.GetLockHolder("L", kNoDeadline)->holder != "parent") return 3;
    return 0;
  });
  EXPECT_EQ(rc, 0) << "child process: 1 = stole the lock, 2 = wrong error, 3 = wrong holder";
  ASSERT_TRUE(parent.Unlock("L", "parent", kNoDeadline).ok());
  const int rc2 = RunInChild([&] {
    CoordinationFileBackend child(Runtime::Real(), dir.path());
    auto g = child.TryLock("L", "child", 60s, kNoDeadline);
    return g.ok() && g->token == 2 ? 0 : 1;
  });
  EXPECT_EQ(rc2, 0) << "child could not take the released lock with token 2";
  EXPECT_EQ(parent.GetLockHolder("L", kNoDeadline)->holder, "child");
}

TEST(FileBackendTest, ConcurrentProcessesNeverShareALockOrAToken) {
  TempDir dir("kvchaos-filebackend");
  constexpr int kProcs = 3;
  constexpr int kGrantsEach = 30;
  // A bound in time, not in tries: a holder descheduled for a few milliseconds (3 processes on
  // 2 cores) lets the others fail thousands of tries in a row.
  constexpr auto kPatience = 30s;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      CoordinationFileBackend b(Runtime::Real(), dir.path());
      const std::string me = "p" + std::to_string(p);
      std::ofstream out(dir.path() / ("tokens-" + me + ".txt"));
      int bad = 0;
      int granted = 0;
      // A contended TryLock fails at once (nobody waits for anybody): try until enough grants.
      const auto give_up = std::chrono::steady_clock::now() + kPatience;
      while (granted < kGrantsEach && std::chrono::steady_clock::now() < give_up) {
        auto g = b.TryLock("L", me, 60s, kNoDeadline);
        if (!g.ok()) {
          std::this_thread::yield();
          continue;
        }
        ++granted;
        // While we hold it, nobody else may: the holder must still be us.
        if (b.GetLockHolder("L", kNoDeadline)->holder != me) ++bad;
        out << g->token << "\n";
        if (!b.Unlock("L", me, kNoDeadline).ok()) ++bad;
      }
      out.close();
      ::_exit(bad == 0 ? 0 : 1);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a process saw another holder while holding";
  }
  std::set<uint64_t> tokens;
  size_t grants = 0;
  for (int p = 0; p < kProcs; ++p) {
    std::ifstream in(dir.path() / ("tokens-p" + std::to_string(p) + ".txt"));
    uint64_t t = 0;
    uint64_t last = 0;
    while (in >> t) {
      EXPECT_GT(t, last) << "tokens seen by one process must increase";
      last = t;
      tokens.insert(t);
      ++grants;
    }
  }
  EXPECT_EQ(grants, static_cast<size_t>(kProcs * kGrantsEach))
      << "a process got too few grants in 30 s: a lock left held, or a free lock refused";
  EXPECT_EQ(tokens.size(), grants) << "two grants carried the same fencing token";
  EXPECT_EQ(*tokens.rbegin(), grants) << "tokens must be 1..N without gaps";
}

}  // namespace
}  // namespace kvchaos::election
