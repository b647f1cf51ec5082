// Recovery: one ucm_health_pmon per store, one reusable ucm_health_io worker shared by every
// backend, a worker replaced when its probe times out, late probe results dropped, and recovery
// while an old probe is still stuck in the kernel. The executor's and the monitor's timing rules
// run on virtual time (the simulated disk's hang and latency rules, sim/virtual_disk.h); what
// concerns the operating system (thread names, CPU affinity) runs on real threads.
#include "core/store/health_monitor.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "core/common/thread_util.h"
#include "core/store/health_check_executor.h"
#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/log_capture.h"
#include "core/store/tests/store_test_util.h"
#include "core/store/tests/virtual_time_util.h"
#include "sim/virtual_disk.h"

namespace kvchaos::store {
namespace {

using namespace std::chrono_literals;
using testing::Backends;
using testing::ConfigFor;
using testing::Eventually;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::Gate;
using testing::OnVirtualTime;
using testing::Op;
using testing::ThreadsNamed;

void Trip(BackendSet& set, int backend) {
  set.Record(backend, false, SampleSource::kBusiness);
  set.Record(backend, false, SampleSource::kBusiness);
  ASSERT_FALSE(set.available(backend));
}

TEST(HealthCheckExecutorTest, OneWorkerServesEveryProbeWhileNoneTimesOut) {
  OnVirtualTime([](Runtime& rt) {
    HealthCheckExecutor executor(rt);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(executor.Run([] { return Status::Ok(); }, 1s).ok());
    EXPECT_EQ(executor.workers_started(), 1) << "the worker must be reused";
  });
}

TEST(HealthCheckExecutorTest, TimedOutWorkerIsRetiredAndItsLateResultIsDropped) {
  OnVirtualTime([](Runtime& rt) {
    HealthCheckExecutor executor(rt);
    Gate gate(rt);
    bool late_done = false;
    const MonoTime start = rt.Now();
    const Status timed_out = executor.Run(
        [&] {
          gate.Wait();
          late_done = true;
          return Status::IoError("late failure", EIO);
        },
        30ms);
    EXPECT_EQ(timed_out.code(), StatusCode::kTimeout) << timed_out.ToString();
    EXPECT_EQ(rt.Now() - start, 30ms) << "the probe must be given up exactly at its timeout";
    EXPECT_EQ(executor.Run([] { return Status::Ok(); }, 1s).code(), StatusCode::kOk)
        << "the next probe must run on a new worker, not wait behind the stuck one";
    EXPECT_EQ(executor.workers_started(), 2);
    gate.Open();
    ASSERT_TRUE(sim::WaitUntilHolds(rt, [&] { return late_done; }));
    EXPECT_TRUE(sim::WaitUntilHolds(rt, [&] { return executor.workers_alive() == 1; }))
        << "the retired worker must exit and be joined";
    EXPECT_TRUE(executor.Run([] { return Status::Ok(); }, 1s).ok())
        << "the stuck probe's late failure leaked into a later probe";
    EXPECT_EQ(executor.workers_started(), 2);
  });
}

TEST(HealthCheckExecutorTest, StuckProbesOfOnePathAreBoundedAndOtherPathsStillProbe) {
  // A hung path: every probe of it sticks in the kernel. Without a bound each probe interval left
  // one more thread behind.
  OnVirtualTime([](Runtime& rt) {
    HealthCheckExecutor executor(rt, /*max_stuck_per_owner=*/2);
    Gate gate(rt);
    int entered = 0;
    auto hung = [&] {
      ++entered;
      gate.Wait();
      return Status::Ok();
    };
    for (int i = 0; i < 2; ++i) EXPECT_EQ(executor.Run(hung, 10ms, /*owner=*/0).code(), StatusCode::kTimeout);
    ASSERT_EQ(entered, 2);
    const int started = executor.workers_started();
    for (int i = 0; i < 20; ++i) {
      const Status refused = executor.Run(hung, 10ms, /*owner=*/0);
      EXPECT_EQ(refused.code(), StatusCode::kTimeout);
      EXPECT_NE(refused.message().find("2 earlier probes of it are still stuck"), std::string::npos) << refused.ToString();
    }
    EXPECT_EQ(entered, 2) << "a probe ran although two of its path's probes were stuck";
    EXPECT_EQ(executor.workers_started(), started) << "refused probes must not start threads";
    EXPECT_LE(executor.workers_alive(), 3) << "two stuck workers and the current one at most";
    EXPECT_TRUE(executor.Run([] { return Status::Ok(); }, 1s, /*owner=*/1).ok())
        << "another path's probe must still run while path 0's probes are stuck";
    gate.Open();
    ASSERT_TRUE(sim::WaitUntilHolds(rt, [&] { return executor.workers_alive() == 1; }))
        << "the stuck workers must exit once released";
    EXPECT_TRUE(executor.Run([] { return Status::Ok(); }, 1s, /*owner=*/0).ok()) << "path 0 probes again once unstuck";
  });
}

TEST(HealthCheckExecutorTest, DestructionJoinsRetiredWorkers) {
  OnVirtualTime([](Runtime& rt) {
    Gate gate(rt);
    bool finished = false;
    {
      HealthCheckExecutor executor(rt);
      EXPECT_EQ(executor.Run(
                    [&] {
                      rt.SleepFor(5s);  // still stuck when the executor goes
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
  });
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

// A store over `disk` (psync, no attempt timeouts) handed to `body` on virtual time; `tune`
// adjusts its config first.
void WithStore(sim::VirtualDisk& disk, const std::function<void(PosixStoreConfig&)>& tune,
               const std::function<void(PosixStore&)>& body) {
  EXPECT_EQ(disk.Run([&] {
              PosixStore store(disk.Deps());
              PosixStoreConfig cfg = ConfigFor(disk.paths(), IoEngineKind::kPsync);
              tune(cfg);
              const Status setup = store.Setup(cfg);
              ASSERT_TRUE(setup.ok()) << setup.ToString();
              body(store);
            }),
            "");
}

// Calls that reached the mount of `path` so far.
uint64_t Calls(sim::VirtualDisk& disk, int path) { return disk.disk().mount(disk.path(path))->calls; }

TEST(HealthMonitorTest, HealthyBackendsAreNeverProbed) {
  sim::VirtualDisk disk(3, /*shared=*/false);
  WithStore(disk, [](PosixStoreConfig&) {}, [&](PosixStore& store) {
    const uint64_t healthy_calls = Calls(disk, 0);
    const uint64_t tripped_calls = Calls(disk, 2);
    Trip(store.backends(), 2);
    ASSERT_TRUE(sim::WaitUntilHolds(disk.runtime(), [&] { return store.monitor().probes_run() >= 3; }));
    EXPECT_EQ(Calls(disk, 0), healthy_calls) << "a healthy path got a recovery probe";
    EXPECT_GE(Calls(disk, 2), tripped_calls + 3) << "the excluded path must be probed";
  });
}

TEST(HealthMonitorTest, OneWorkerIsReusedAcrossBackends) {
  sim::VirtualDisk disk(3, /*shared=*/false);
  auto tune = [](PosixStoreConfig& cfg) {
    cfg.health.health_check_timeout_s = 0.5;
    cfg.health.health_check_interval_s = 0.51;
    cfg.health.health_window_size = 3;
    cfg.health.failure_threshold = 2;
  };
  WithStore(disk, tune, [&](PosixStore& store) {
    Trip(store.backends(), 0);
    Trip(store.backends(), 2);
    ASSERT_TRUE(sim::WaitUntilHolds(
        disk.runtime(), [&] { return store.backends().available(0) && store.backends().available(2); }));
    EXPECT_GE(store.monitor().probes_run(), 6) << "each path needs a full window (3) of probes";
    EXPECT_EQ(store.monitor().workers_started(), 1) << "without timeouts all probes share one ucm_health_io worker";
  });
}

// The first probe of p1 hangs creating its file for as long as the test wants, then fails; the monitor
// times it out, starts a new worker and recovers p1 with a full window of new probes while the old
// one is still stuck; releasing the old probe later changes nothing.
TEST(HealthMonitorTest, RecoveryWhileAnOldProbeIsStillStuck) {
  sim::VirtualDisk disk(2, /*shared=*/false);
  WithStore(disk, [](PosixStoreConfig&) {}, [&](PosixStore& store) {
    ASSERT_TRUE(disk.AddRule(1, "{id: stuck, action: hang, ops: [create, open], max_hits: 1}").ok());
    ASSERT_TRUE(disk.AddRule(1, "{id: eio, action: errno, errno: EIO, ops: [create, open], max_hits: 1}").ok());
    Trip(store.backends(), 1);
    ASSERT_TRUE(sim::WaitUntilHolds(disk.runtime(), [&] { return store.backends().available(1); }))
        << "a stuck probe must not block recovery through new probes";
    EXPECT_GE(store.monitor().workers_started(), 2) << "the timed-out worker must have been replaced";
    const int count_before = store.backends().window(1).count();
    const int failures_before = store.backends().window(1).failures();
    ASSERT_TRUE(disk.RemoveRule(1, "stuck").ok());  // the old probe now fails (EIO), late
    disk.runtime().SleepFor(1s);
    EXPECT_TRUE(store.backends().available(1)) << "a late probe failure from a retired worker re-excluded the path";
    EXPECT_EQ(store.backends().window(1).failures(), failures_before);
    EXPECT_EQ(store.backends().window(1).count(), count_before);
  });
}

TEST(HealthMonitorTest, ProbeTimeoutCountsAsAFailure) {
  sim::VirtualDisk disk(2, /*shared=*/false);
  WithStore(disk, [](PosixStoreConfig&) {}, [&](PosixStore& store) {
    // Every create or open on p0 takes 150 ms, past the 40 ms probe timeout.
    ASSERT_TRUE(disk.AddRule(0, "{id: slow, action: latency, latency: 150ms, ops: [create, open]}").ok());
    Trip(store.backends(), 0);
    ASSERT_TRUE(sim::WaitUntilHolds(disk.runtime(), [&] { return store.monitor().probes_run() >= 4; }));
    EXPECT_FALSE(store.backends().available(0)) << "timed-out probes must not count as successes";
    // Each timed-out probe retired its worker; with two of them stuck, further probes of the path
    // are answered Timeout without a thread (HealthCheckExecutor's bound) until one returns.
    EXPECT_GE(store.monitor().workers_started(), 2) << "every timed-out probe retires its worker";
    ASSERT_TRUE(disk.RemoveRule(0, "slow").ok());
    ASSERT_TRUE(sim::WaitUntilHolds(disk.runtime(), [&] { return store.backends().available(0); }))
        << "the path must recover once its probes are fast again";
  });
}

// Upstream's ProbeIntervalIncludesHealthCheckTime: probes 80 ms long every 100 ms start 100 ms
// apart, not 180 ms.
TEST(HealthMonitorTest, TheProbeIntervalIncludesTheProbesOwnTime) {
  OnVirtualTime([](Runtime& rt) {
    BackendSet set(rt, {"/p0"}, /*window_size=*/100, /*failure_threshold=*/1);
    Trip(set, 0);
    std::vector<MonoTime> starts;
    HealthMonitor monitor(
        rt, set,
        [&](int) {
          starts.push_back(rt.Now());
          rt.SleepFor(80ms);
          return Status::IoError("still down", EIO);
        },
        /*interval=*/100ms, /*probe_timeout=*/90ms, {});
    monitor.Start();
    ASSERT_TRUE(sim::WaitUntilHolds(rt, [&] { return starts.size() >= 4; }));
    monitor.Stop();
    for (size_t i = 1; i < starts.size(); ++i) {
      EXPECT_EQ(starts[i] - starts[i - 1], 100ms)
          << "probe " << i << " started " << ToMillis(starts[i] - starts[i - 1])
          << " ms after the one before: the interval must include the probe's own 80 ms";
    }
  });
}

// p0's probes hang for good; p1's still start within one probe timeout of every round's start
// (p0's stalled probe comes first in the round, and once two of them are stuck p0 is answered at
// once), so p1 recovers after its window of rounds as if p0 were fine.
TEST(HealthMonitorTest, AStalledRecoveryOfOnePathDoesNotDelayAnotherPathsProbes) {
  OnVirtualTime([](Runtime& rt) {
    BackendSet set(rt, {"/p0", "/p1"}, /*window_size=*/3, /*failure_threshold=*/1);
    Trip(set, 0);
    Trip(set, 1);
    Gate hung(rt);
    std::vector<MonoTime> p1_starts;
    const Duration interval = 1s, timeout = 300ms;
    const MonoTime start = rt.Now();
    HealthMonitor monitor(
        rt, set,
        [&](int backend) {
          if (backend == 0) {
            hung.Wait();
            return Status::Ok();
          }
          p1_starts.push_back(rt.Now());
          return Status::Ok();
        },
        interval, timeout, {});
    monitor.Start();
    ASSERT_TRUE(sim::WaitUntilHolds(rt, [&] { return set.available(1); })) << "p1 never recovered";
    ASSERT_EQ(p1_starts.size(), 3u) << "p1 needs exactly its window (3) of probes";
    for (size_t round = 0; round < p1_starts.size(); ++round) {
      const Duration late = p1_starts[round] - (start + static_cast<int>(round) * interval);
      EXPECT_LE(late, timeout) << "p1's probe of round " << round << " started " << ToMillis(late)
                               << " ms after the round began: p0's stalled recovery delayed it";
    }
    EXPECT_FALSE(set.available(0));
    hung.Open();  // the stuck workers must be able to exit for Stop to join them
    monitor.Stop();
  });
}

// Upstream logs every window transition and every failed probe with its status; so do we.
TEST(HealthMonitorTest, EveryTransitionAndEveryFailedProbeIsLoggedWithItsStatus) {
  testing::LogCapture log;
  OnVirtualTime([](Runtime& rt) {
    BackendSet set(rt, {"/p0"}, /*window_size=*/2, /*failure_threshold=*/1);
    set.Record(0, false, SampleSource::kBusiness);
    ASSERT_FALSE(set.available(0));
    int probes = 0;
    HealthMonitor monitor(
        rt, set,
        [&](int) {
          return ++probes <= 2 ? Status::IoError("write('/p0/.probe-1.tmp') failed", EIO) : Status::Ok();
        },
        100ms, 50ms, {});
    monitor.Start();
    ASSERT_TRUE(sim::WaitUntilHolds(rt, [&] { return set.available(0); }));
    monitor.Stop();
  });
  // At warning or info: the default level (info) shows them.
  EXPECT_EQ(log.Lines({"warning", "'/p0' excluded"}), 1) << log.text();
  EXPECT_EQ(log.Lines({"info", "'/p0' is available again"}), 1) << log.text();
  EXPECT_EQ(log.Lines({"warning", "recovery probe of '/p0' failed", "write('/p0/.probe-1.tmp') failed",
                       "Input/output error"}),
            2)
      << "each failed probe needs its own line with its status:\n" << log.text();
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
