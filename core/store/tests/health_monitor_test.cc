// Recovery: one ucm_health_pmon per store, one reusable ucm_health_io worker shared by every
// backend, a worker replaced when its probe times out, late probe results dropped, and recovery
// while an old probe is still stuck in the kernel.
#include "core/store/health_monitor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>

#include "core/common/thread_util.h"
#include "core/store/health_check_executor.h"
#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using namespace std::chrono_literals;
using testing::Backends;
using testing::Eventually;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::Op;
using testing::ThreadsNamed;

void Trip(BackendSet& set, int backend) {
  set.Record(backend, false, SampleSource::kBusiness);
  set.Record(backend, false, SampleSource::kBusiness);
  ASSERT_FALSE(set.available(backend));
}

// A gate a probe can wait on.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return open; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};

TEST(HealthCheckExecutorTest, OneWorkerServesEveryProbeWhileNoneTimesOut) {
  HealthCheckExecutor executor(Runtime::Real());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(executor.Run([] { return Status::Ok(); }, 1s).ok());
  EXPECT_EQ(executor.workers_started(), 1) << "the worker must be reused";
}

TEST(HealthCheckExecutorTest, TimedOutWorkerIsRetiredAndItsLateResultIsDropped) {
  HealthCheckExecutor executor(Runtime::Real());
  Gate gate;
  std::atomic<bool> late_done{false};
  const Status timed_out = executor.Run(
      [&] {
        gate.Wait();
        late_done = true;
        return Status::IoError("late failure", EIO);
      },
      30ms);
  EXPECT_EQ(timed_out.code(), StatusCode::kTimeout) << timed_out.ToString();
  EXPECT_EQ(executor.Run([] { return Status::Ok(); }, 1s).code(), StatusCode::kOk)
      << "the next probe must run on a new worker, not wait behind the stuck one";
  EXPECT_EQ(executor.workers_started(), 2);
  gate.Open();
  ASSERT_TRUE(Eventually([&] { return late_done.load(); }));
  EXPECT_TRUE(Eventually([&] { return executor.workers_alive() == 1; })) << "the retired worker must exit and be joined";
  EXPECT_TRUE(executor.Run([] { return Status::Ok(); }, 1s).ok()) << "the stuck probe's late failure leaked into a later probe";
  EXPECT_EQ(executor.workers_started(), 2);
}

TEST(HealthCheckExecutorTest, StuckProbesOfOnePathAreBoundedAndOtherPathsStillProbe) {
  // A hung path: every probe of it sticks in the kernel. Without a bound each probe interval left
  // one more thread behind.
  HealthCheckExecutor executor(Runtime::Real(), /*max_stuck_per_owner=*/2);
  Gate gate;
  std::atomic<int> entered{0};
  auto hung = [&] {
    ++entered;
    gate.Wait();
    return Status::Ok();
  };
  for (int i = 0; i < 2; ++i) EXPECT_EQ(executor.Run(hung, 10ms, /*owner=*/0).code(), StatusCode::kTimeout);
  ASSERT_TRUE(Eventually([&] { return entered.load() == 2; }));
  const int started = executor.workers_started();
  for (int i = 0; i < 20; ++i) {
    const Status refused = executor.Run(hung, 10ms, /*owner=*/0);
    EXPECT_EQ(refused.code(), StatusCode::kTimeout);
    EXPECT_NE(refused.message().find("2 earlier probes of it are still stuck"), std::string::npos) << refused.ToString();
  }
  EXPECT_EQ(entered.load(), 2) << "a probe ran although two of its path's probes were stuck";
  EXPECT_EQ(executor.workers_started(), started) << "refused probes must not start threads";
  EXPECT_LE(executor.workers_alive(), 3) << "two stuck workers and the current one at most";
  EXPECT_TRUE(executor.Run([] { return Status::Ok(); }, 1s, /*owner=*/1).ok())
      << "another path's probe must still run while path 0's probes are stuck";
  gate.Open();
  ASSERT_TRUE(Eventually([&] { return executor.workers_alive() == 1; })) << "the stuck workers must exit once released";
  EXPECT_TRUE(executor.Run([] { return Status::Ok(); }, 1s, /*owner=*/0).ok()) << "path 0 probes again once unstuck";
}

TEST(HealthCheckExecutorTest, DestructionJoinsRetiredWorkers) {
  Gate gate;
  std::atomic<bool> finished{false};
  {
    HealthCheckExecutor executor(Runtime::Real());
    EXPECT_EQ(executor.Run(
                  [&] {
                    gate.Wait();
                    finished = true;
                    return Status::Ok();
                  },
                  10ms)
                  .code(),
              StatusCode::kTimeout);
    gate.Open();
  }
  EXPECT_TRUE(finished) << "the executor must wait for its stuck worker before going away";
}

TEST(HealthMonitorTest, OneMonitorThreadPerStoreWhateverTheBackendCount) {
  Backends backends(4, false);
  const int before = ThreadsNamed("ucm_health_pmon");
  PosixStore store;
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kPsync)).ok());
  // The thread names itself once it runs.
  EXPECT_TRUE(Eventually([&] { return ThreadsNamed("ucm_health_pmon") - before == 1; }))
      << ThreadsNamed("ucm_health_pmon") - before << " monitor threads";
  Trip(store.backends(), 1);
  Trip(store.backends(), 3);
  ASSERT_TRUE(Eventually([&] { return store.monitor().probes_run() >= 4; }));
  EXPECT_EQ(ThreadsNamed("ucm_health_pmon") - before, 1) << "unhealthy paths must not get their own monitors";
}

TEST(HealthMonitorTest, HealthyBackendsAreNeverProbed) {
  Backends backends(3, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kPsync)).ok());
  const int writes0 = ops.Count(Op::kWrite, backends[0] + "/");
  Trip(store.backends(), 2);
  ASSERT_TRUE(Eventually([&] { return store.monitor().probes_run() >= 3; }));
  EXPECT_EQ(ops.Count(Op::kWrite, backends[0] + "/"), writes0) << "a healthy path got a recovery probe";
  EXPECT_GE(ops.Count(Op::kWrite, backends[2] + "/"), 3);
}

TEST(HealthMonitorTest, OneWorkerIsReusedAcrossBackends) {
  Backends backends(3, false);
  PosixStore store;
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.io_direct = true;  // no fsync: probes far below the timeout even on a loaded machine
  cfg.health.health_check_timeout_s = 0.5;
  cfg.health.health_check_interval_s = 0.51;
  cfg.health.health_window_size = 3;
  cfg.health.failure_threshold = 2;
  ASSERT_TRUE(store.Setup(cfg).ok());
  Trip(store.backends(), 0);
  Trip(store.backends(), 2);
  ASSERT_TRUE(Eventually([&] { return store.backends().available(0) && store.backends().available(2); }));
  EXPECT_GE(store.monitor().probes_run(), 6) << "each path needs a full window (3) of probes";
  EXPECT_EQ(store.monitor().workers_started(), 1) << "without timeouts all probes share one ucm_health_io worker";
  EXPECT_LE(ThreadsNamed("ucm_health_io"), 1);
}

// The first probe of p1 hangs in open() for as long as the test wants; the monitor times it out,
// starts a new worker and recovers p1 with a full window of new probes while the old one is still
// stuck; releasing the old probe later changes nothing.
TEST(HealthMonitorTest, RecoveryWhileAnOldProbeIsStillStuck) {
  Backends backends(2, false);
  FaultFileOps ops;
  auto store = std::make_unique<PosixStore>(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.io_direct = true;  // no fsync: healthy probes stay far below the timeout
  ASSERT_TRUE(store->Setup(cfg).ok());
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[1] + "/", .err = EIO, .hang = true, .times = 1});
  Trip(store->backends(), 1);
  ASSERT_TRUE(Eventually([&] { return store->backends().available(1); }))
      << "a stuck probe must not block recovery through new probes";
  EXPECT_GE(store->monitor().workers_started(), 2) << "the timed-out worker must have been replaced";
  EXPECT_EQ(ops.Count(Op::kOpen, backends[1] + "/") >= 9, true);
  const int count_before = store->backends().window(1).count();
  const int failures_before = store->backends().window(1).failures();
  ops.Release();  // the old probe now fails (EIO), late
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(store->backends().available(1)) << "a late probe failure from a retired worker re-excluded the path";
  EXPECT_EQ(store->backends().window(1).failures(), failures_before);
  EXPECT_EQ(store->backends().window(1).count(), count_before);
  store.reset();  // joins the monitor and every worker, the retired one included
  EXPECT_EQ(ThreadsNamed("ucm_health_io"), 0) << "stopping the store must join all workers";
}

TEST(HealthMonitorTest, ProbeTimeoutCountsAsAFailure) {
  Backends backends(2, false);
  FaultFileOps ops;
  auto store = std::make_unique<PosixStore>(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.io_direct = true;  // no fsync: a healthy probe stays far below the 40 ms timeout
  ASSERT_TRUE(store->Setup(cfg).ok());
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[0] + "/", .delay = 150ms});
  Trip(store->backends(), 0);
  ASSERT_TRUE(Eventually([&] { return store->monitor().probes_run() >= 4; }));
  EXPECT_FALSE(store->backends().available(0)) << "timed-out probes must not count as successes";
  // Each timed-out probe retired its worker; with two of them stuck, further probes of the path are
  // answered Timeout without a thread (HealthCheckExecutor's bound) until one returns.
  EXPECT_GE(store->monitor().workers_started(), 2) << "every timed-out probe retires its worker";
  ops.Clear();
  ASSERT_TRUE(Eventually([&] { return store->backends().available(0); }));
}

// Cpus_allowed_list of every thread named `name`.
std::vector<std::string> AffinityOfThreads(const std::string& name) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm_in(e.path() / "comm");
    std::string comm;
    std::getline(comm_in, comm);
    if (comm != name) continue;
    std::ifstream status_in(e.path() / "status");
    for (std::string line; std::getline(status_in, line);) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) out.push_back(line.substr(line.find_first_not_of(" \t", 18)));
    }
  }
  return out;
}

TEST(HealthMonitorTest, CpuAffinityPinsTheMonitorAndItsWorkersInherit) {
  const std::vector<int> allowed = CurrentThreadAffinity();
  ASSERT_FALSE(allowed.empty());
  const int cpu = allowed.back();
  Backends backends(2, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.cpu_affinity = {cpu};
  ASSERT_TRUE(store.Setup(cfg).ok());
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[1] + "/", .err = EIO});  // keep probing
  Trip(store.backends(), 1);
  ASSERT_TRUE(Eventually([&] { return store.monitor().probes_run() >= 2; }));
  const std::vector<std::string> monitor = AffinityOfThreads("ucm_health_pmon");
  const std::vector<std::string> workers = AffinityOfThreads("ucm_health_io");
  ASSERT_EQ(monitor.size(), 1u);
  EXPECT_EQ(monitor[0], std::to_string(cpu)) << "ucm_health_pmon is not pinned to cpu_affinity";
  ASSERT_FALSE(workers.empty());
  for (const std::string& w : workers) EXPECT_EQ(w, std::to_string(cpu)) << "ucm_health_io did not inherit the affinity";
  EXPECT_EQ(CurrentThreadAffinity(), allowed) << "pinning the health threads must not pin the caller";
}

}  // namespace
}  // namespace kvchaos::store
