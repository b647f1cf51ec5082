// Real processes, real clocks, the file backend: three forked processes each run a LeaderElector
// on one lock directory. The leader is paused (SIGSTOP) until another process has taken over with
// a higher fencing token, then resumed; later that leader is killed (SIGKILL) and a third term
// must follow. Every process samples IsLeader() every 2 ms into its own file; the
// sampled leadership windows of different terms must never overlap (a necessary condition of
// "at most one leader at a time" that a real overlap would break).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <thread>

#include "core/common/real_runtime.h"
#include "core/election/coordination_file_backend.h"
#include "core/election/leader_elector.h"
#include "core/election/tests/manual_runtime.h"
#include "testing/temp_dir.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;

[[noreturn]] void RunNode(const std::filesystem::path& dir, const std::string& id) {
  Runtime& rt = Runtime::Real();
  CoordinationFileBackend backend(rt, dir / "lock");
  (void)backend.Init();
  LeaderElectorOptions o;
  o.node_id = id;
  o.lease_ms = 600;
  o.loop_interval_ms = 20;
  LeaderElector elector(rt, backend, o, {});
  if (!elector.Start().ok()) ::_exit(3);
  std::ofstream samples(dir / ("samples-" + id));
  while (true) {  // until the parent kills us
    const FencingToken token = elector.CurrentToken();
    if (token != 0) {
      samples << rt.Now().time_since_epoch().count() << " " << token << "\n" << std::flush;
      std::ofstream(dir / ("leader-" + id)) << token;
    }
    rt.SleepFor(2ms);
  }
}

// The node currently reporting leadership with a token above `min_token`, or "".
std::string LeaderAbove(const std::filesystem::path& dir, const std::vector<std::string>& ids, uint64_t min_token,
                        uint64_t* token) {
  for (const auto& id : ids) {
    std::ifstream in(dir / ("leader-" + id));
    uint64_t t = 0;
    if (in >> t && t > min_token) {
      *token = t;
      return id;
    }
  }
  return "";
}

TEST(MultiProcessFailoverTest, PausedAndKilledLeadersAreReplacedAndTermsNeverOverlap) {
  kvchaos::testing::TempDir dir("kvchaos-mp-election");
  const std::vector<std::string> ids = {"p1", "p2", "p3"};
  std::map<std::string, pid_t> pids;
  for (const auto& id : ids) {
    const pid_t pid = ::fork();
    if (pid == 0) RunNode(dir.path(), id);
    pids[id] = pid;
  }
  struct Reaper {  // never leave a child behind, whatever fails
    std::map<std::string, pid_t>& pids;
    ~Reaper() {
      for (auto& [id, pid] : pids) {
        if (pid > 0) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, nullptr, 0);
        }
      }
    }
  } reaper{pids};

  uint64_t first_token = 0;
  std::string first;
  ASSERT_TRUE(testing::WaitFor([&] { return !(first = LeaderAbove(dir.path(), ids, 0, &first_token)).empty(); }, 20s))
      << "no process became leader";
  ::kill(pids[first], SIGSTOP);  // a paused leader: its lease runs out while it cannot act
  uint64_t second_token = 0;
  std::string second;
  const bool took_over = testing::WaitFor(
      [&] { return !(second = LeaderAbove(dir.path(), ids, first_token, &second_token)).empty(); }, 20s);
  ::kill(pids[first], SIGCONT);  // it wakes up believing nothing happened
  ASSERT_TRUE(took_over) << "no process took over from the paused leader";
  EXPECT_NE(second, first);
  EXPECT_GT(second_token, first_token);
  std::this_thread::sleep_for(300ms);  // the resumed old leader samples with its old view

  ::kill(pids[second], SIGKILL);
  ::waitpid(pids[second], nullptr, 0);
  pids[second] = -1;
  uint64_t third_token = 0;
  std::string third;
  ASSERT_TRUE(testing::WaitFor(
      [&] { return !(third = LeaderAbove(dir.path(), ids, second_token, &third_token)).empty(); }, 20s))
      << "no process took over after the leader was killed";
  EXPECT_NE(third, second);
  std::this_thread::sleep_for(100ms);

  // Sampled leadership windows per token: [first sample, last sample]; no two may overlap.
  std::map<uint64_t, std::pair<int64_t, int64_t>> windows;
  std::map<uint64_t, std::string> owner;
  for (const auto& id : ids) {
    std::ifstream in(dir.path() / ("samples-" + id));
    int64_t t = 0;
    uint64_t token = 0;
    while (in >> t >> token) {
      auto [it, fresh] = windows.try_emplace(token, t, t);
      if (!fresh) it->second = {std::min(it->second.first, t), std::max(it->second.second, t)};
      if (owner.count(token)) {
        EXPECT_EQ(owner[token], id) << "token " << token << " held by two processes";
      }
      owner[token] = id;
    }
  }
  ASSERT_GE(windows.size(), 3u);
  for (auto a = windows.begin(); a != windows.end(); ++a) {
    auto b = std::next(a);
    if (b == windows.end()) break;
    EXPECT_LT(a->second.second, b->second.first)
        << "term " << a->first << " (" << owner[a->first] << ") still served when term " << b->first << " ("
        << owner[b->first] << ") had begun";
  }
}

}  // namespace
}  // namespace kvchaos::election
