// What one elector round costs on the file coordination backend: a renewal publishes a new
// generation (a temp file fsynced, link(2), the directory fsynced), a campaign against a held
// lock reads the newest generation and stops, GetLockHolder only reads. The directory is
// $KVCHAOS_BENCH_DIR (default /tmp), so a user can measure the disk their nodes would use; run it
// once on /dev/shm to see the cost without the fsyncs' device writes.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "core/common/real_runtime.h"
#include "core/election/coordination_file_backend.h"

namespace {

using kvchaos::Runtime;
using kvchaos::election::CoordinationFileBackend;
using kvchaos::election::kNoDeadline;
using namespace std::chrono_literals;

// A fresh directory under $KVCHAOS_BENCH_DIR, removed when the benchmark ends.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    const char* base = ::getenv("KVCHAOS_BENCH_DIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/kvchaos-coordbench.XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A backend over `dir` with `holder` holding the lock "L"; false (and the benchmark skipped) when
// the scratch directory is unusable.
bool TakeLock(benchmark::State& state, const ScratchDirectory& dir, CoordinationFileBackend& b,
              const std::string& holder) {
  if (!dir.path().empty() && b.Init().ok() && b.TryLock("L", holder, 3600s, kNoDeadline).ok()) return true;
  state.SkipWithError("cannot take the lock in the scratch directory");
  return false;
}

void BM_FileRenewLock(benchmark::State& state) {
  ScratchDirectory dir;
  CoordinationFileBackend b(Runtime::Real(), dir.path());
  if (!TakeLock(state, dir, b, "me")) return;
  for (auto _ : state) {
    if (!b.RenewLock("L", "me", 3600s, kNoDeadline).ok()) state.SkipWithError("renewal failed");
  }
}
BENCHMARK(BM_FileRenewLock)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_FileCampaignAgainstAHeldLock(benchmark::State& state) {
  ScratchDirectory dir;
  CoordinationFileBackend b(Runtime::Real(), dir.path());
  if (!TakeLock(state, dir, b, "leader")) return;
  for (auto _ : state) benchmark::DoNotOptimize(b.TryLock("L", "follower", 3600s, kNoDeadline).ok());
}
BENCHMARK(BM_FileCampaignAgainstAHeldLock)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_FileGetLockHolder(benchmark::State& state) {
  ScratchDirectory dir;
  CoordinationFileBackend b(Runtime::Real(), dir.path());
  if (!TakeLock(state, dir, b, "leader")) return;
  for (auto _ : state) benchmark::DoNotOptimize(b.GetLockHolder("L", kNoDeadline).ok());
}
BENCHMARK(BM_FileGetLockHolder)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
