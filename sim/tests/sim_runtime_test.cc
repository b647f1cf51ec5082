// SimRuntime: virtual time, one thread at a time, seeded interleavings, waits on mutexes,
// condition variables and joins, deadlock reports, per-node clocks and node faults, buggify.
#include "sim/sim_runtime.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvchaos::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
constexpr int64_t kMs = 1'000'000;

TEST(SimRuntimeTest, SleepJumpsVirtualTimeWithoutWaiting) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  MonoTime before, after;
  Thread t = rt.SpawnOn(node, "sleeper", [&] {
    before = rt.Now();
    rt.SleepFor(std::chrono::hours(1));
    after = rt.Now();
  });
  EXPECT_EQ(rt.RunUntil(INT64_MAX), SimRuntime::StopReason::kAllDone);
  EXPECT_EQ(after - before, std::chrono::hours(1)) << "the sleeper must wake exactly at its deadline";
  EXPECT_EQ(rt.true_now(), std::chrono::nanoseconds(std::chrono::hours(1)).count());
}

TEST(SimRuntimeTest, RunUntilStopsAtTheGivenTrueTime) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  int ticks = 0;
  Thread t = rt.SpawnOn(node, "ticker", [&] {
    for (int i = 0; i < 100; ++i) {
      rt.SleepFor(milliseconds(10));
      ++ticks;
    }
  });
  EXPECT_EQ(rt.RunUntil(95 * kMs), SimRuntime::StopReason::kTimeReached);
  EXPECT_EQ(ticks, 9);
  EXPECT_EQ(rt.true_now(), 95 * kMs);
  t.Join();  // the driver joins by running the simulation on
  EXPECT_EQ(ticks, 100);
}

TEST(SimRuntimeTest, OnlyOneThreadRunsAtATime) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  Mutex mu(rt);
  bool inside = false;
  int overlaps = 0, entries = 0;
  std::vector<Thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.push_back(rt.SpawnOn(node, "w" + std::to_string(i), [&] {
      for (int k = 0; k < 50; ++k) {
        MutexLock lock(mu);  // a scheduling point
        if (inside) ++overlaps;
        inside = true;
        ++entries;
        inside = false;
      }
    }));
  }
  rt.RunUntil(INT64_MAX);
  EXPECT_EQ(overlaps, 0);
  EXPECT_EQ(entries, 400);
}

std::vector<int> Interleaving(uint64_t seed, uint64_t* hash) {
  SimRuntime rt(SimRuntimeOptions{.seed = seed});
  const int node = rt.AddNode("n0");
  Mutex mu(rt);
  std::vector<int> order;
  std::vector<Thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.push_back(rt.SpawnOn(node, "t" + std::to_string(i), [&, i] {
      for (int k = 0; k < 3; ++k) {
        MutexLock lock(mu);
        order.push_back(i);
      }
    }));
  }
  rt.RunUntil(INT64_MAX);
  *hash = rt.trace().hash();
  return order;
}

TEST(SimRuntimeTest, SeedChoosesInterleavingAndReplaysIt) {
  std::set<std::vector<int>> seen;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    uint64_t h1 = 0, h2 = 0;
    const auto first = Interleaving(seed, &h1);
    const auto again = Interleaving(seed, &h2);
    EXPECT_EQ(first, again) << "seed " << seed << " did not replay its interleaving";
    EXPECT_EQ(h1, h2) << "seed " << seed << " did not replay its trace hash";
    seen.insert(first);
  }
  EXPECT_GE(seen.size(), 10u) << "seeds must explore different interleavings";
}

TEST(SimRuntimeTest, MutexBlocksWhileHeldAcrossSleep) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  Mutex mu(rt);
  TrueNs b_got_it = -1;
  Thread a = rt.SpawnOn(node, "a", [&] {
    MutexLock lock(mu);
    rt.SleepFor(milliseconds(10));
  });
  Thread b = rt.SpawnOn(node, "b", [&] {
    rt.SleepFor(milliseconds(1));
    MutexLock lock(mu);
    b_got_it = rt.true_now();
  });
  rt.RunUntil(INT64_MAX);
  EXPECT_EQ(b_got_it, 10 * kMs) << "b must get the mutex exactly when a releases it";
}

TEST(SimRuntimeTest, CondVarNotifyAndTimeout) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  Mutex mu(rt);
  CondVar cv(rt);
  bool ready = false;
  bool notified_result = false, timeout_result = true;
  TrueNs woke_at = -1, timed_out_at = -1;
  Thread waiter = rt.SpawnOn(node, "waiter", [&] {
    MutexLock lock(mu);
    notified_result = cv.WaitUntil(mu, rt.Now() + seconds(5), [&] { return ready; });
    woke_at = rt.true_now();
    timeout_result = cv.WaitUntil(mu, rt.Now() + milliseconds(30));
    timed_out_at = rt.true_now();
  });
  Thread setter = rt.SpawnOn(node, "setter", [&] {
    rt.SleepFor(milliseconds(20));
    MutexLock lock(mu);
    ready = true;
    cv.NotifyAll();
  });
  rt.RunUntil(INT64_MAX);
  EXPECT_TRUE(notified_result);
  EXPECT_EQ(woke_at, 20 * kMs);
  EXPECT_FALSE(timeout_result) << "a wait with no notify must report its timeout";
  EXPECT_EQ(timed_out_at, 50 * kMs);
}

TEST(SimRuntimeTest, JoinWaitsForTheThread) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  TrueNs joined_at = -1;
  Thread outer = rt.SpawnOn(node, "outer", [&] {
    Thread inner = rt.Spawn("inner", [&] { rt.SleepFor(milliseconds(7)); });
    inner.Join();
    joined_at = rt.true_now();
  });
  rt.RunUntil(INT64_MAX);
  EXPECT_EQ(joined_at, 7 * kMs);
}

TEST(SimRuntimeTest, DeadlockIsReportedWithThreadNamesAndWaitSites) {
  // The mutexes must outlive the runtime, whose destructor unwinds the deadlocked threads.
  std::unique_ptr<Mutex> m1, m2;
  SimRuntime rt;
  const int node = rt.AddNode("n7");
  m1 = std::make_unique<Mutex>(rt);
  m2 = std::make_unique<Mutex>(rt);
  Thread a = rt.SpawnOn(node, "kvc_lease_lock", [&] {
    MutexLock l1(*m1);
    rt.SleepFor(milliseconds(1));
    MutexLock l2(*m2);
  });
  Thread b = rt.SpawnOn(node, "kvc_transition", [&] {
    MutexLock l2(*m2);
    rt.SleepFor(milliseconds(1));
    MutexLock l1(*m1);
  });
  ASSERT_EQ(rt.RunUntil(INT64_MAX), SimRuntime::StopReason::kDeadlock);
  const std::string report = rt.ThreadReport();
  EXPECT_NE(report.find("'kvc_lease_lock' on n7: waiting on mutex"), std::string::npos) << report;
  EXPECT_NE(report.find("held by 'kvc_transition'"), std::string::npos) << report;
  EXPECT_NE(report.find("held by 'kvc_lease_lock'"), std::string::npos) << report;
  rt.CrashNode(node);  // the handles' joins then leave the threads to the runtime's unwinding
}

TEST(SimRuntimeTest, PerNodeClocksDriftAndDeadlinesFollowThem) {
  SimRuntime rt;
  const int fast = rt.AddNode("fast", SimClock(Duration::zero(), 100'000));  // 10% fast
  const int exact = rt.AddNode("exact");
  TrueNs fast_woke = -1, exact_woke = -1;
  Thread a = rt.SpawnOn(fast, "a", [&] {
    rt.SleepFor(milliseconds(110));
    fast_woke = rt.true_now();
  });
  Thread b = rt.SpawnOn(exact, "b", [&] {
    rt.SleepFor(milliseconds(110));
    exact_woke = rt.true_now();
  });
  rt.RunUntil(INT64_MAX);
  EXPECT_EQ(fast_woke, 100 * kMs) << "a clock 10% fast reaches 110 ms local at 100 ms true";
  EXPECT_EQ(exact_woke, 110 * kMs);
}

TEST(SimRuntimeTest, ForwardClockStepWakesSleepersEarly) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  TrueNs woke = -1;
  Thread t = rt.SpawnOn(node, "sleeper", [&] {
    rt.SleepFor(seconds(10));
    woke = rt.true_now();
  });
  rt.At(1000 * kMs, [&] { rt.StepMonoForward(node, seconds(4)); });
  rt.RunUntil(INT64_MAX);
  EXPECT_EQ(woke, 6'000 * kMs) << "10 s local deadline, clock stepped 4 s forward at 1 s";
}

TEST(SimRuntimeTest, PausedNodeRunsNothingUntilResumed) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  std::vector<TrueNs> ticks;
  Thread t = rt.SpawnOn(node, "ticker", [&] {
    for (int i = 0; i < 4; ++i) {
      rt.SleepFor(milliseconds(100));
      ticks.push_back(rt.true_now() / kMs);
    }
  });
  rt.At(150 * kMs, [&] { rt.SetPaused(node, true); });
  rt.At(450 * kMs, [&] { rt.SetPaused(node, false); });
  rt.RunUntil(INT64_MAX);
  EXPECT_EQ(ticks, (std::vector<TrueNs>{100, 450, 550, 650})) << "the 200 ms tick must wait for the resume at 450";
}

TEST(SimRuntimeTest, CrashedThreadsFreezeRestartedOnesRunAndReviveUnwinds) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  int old_ticks = 0, new_ticks = 0;
  bool stop = false;
  Thread old_thread = rt.SpawnOn(node, "old", [&] {
    while (!stop) {
      rt.SleepFor(milliseconds(10));
      ++old_ticks;
    }
  });
  rt.RunUntil(55 * kMs);
  rt.CrashNode(node);
  Thread fresh = rt.SpawnOn(node, "new", [&] {
    for (int i = 0; i < 5; ++i) {
      rt.SleepFor(milliseconds(10));
      ++new_ticks;
    }
  });
  rt.RunUntil(500 * kMs);
  EXPECT_EQ(old_ticks, 5) << "a crashed node's thread must not run again";
  EXPECT_EQ(new_ticks, 5) << "a thread of the restarted node must run";
  stop = true;
  rt.ReviveCrashed(node);
  old_thread.Join();
  EXPECT_EQ(old_ticks, 6);
}

TEST(SimRuntimeTest, SlowCpuDelaysEveryWakeUp) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  std::vector<TrueNs> ticks;
  rt.SetSlowCpu(node, milliseconds(5));
  Thread t = rt.SpawnOn(node, "ticker", [&] {
    for (int i = 0; i < 3; ++i) {
      rt.SleepFor(milliseconds(100));
      ticks.push_back(rt.true_now() / kMs);
    }
  });
  rt.RunUntil(INT64_MAX);
  EXPECT_EQ(ticks, (std::vector<TrueNs>{110, 215, 320})) << "start and each wake-up are 5 ms late";
}

TEST(SimRuntimeTest, BuggifyIsAFunctionOfSeedAndSite) {
  auto fired = [](uint64_t seed) {
    SimRuntime rt(SimRuntimeOptions{.seed = seed, .buggify_site_probability = 0.5, .buggify_fire_probability = 0.5});
    std::string pattern;
    for (int i = 0; i < 32; ++i) pattern += rt.Buggify("renew.slow") ? '1' : '0';
    return pattern;
  };
  std::set<std::string> patterns;
  int enabled = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    EXPECT_EQ(fired(seed), fired(seed)) << "seed " << seed;
    patterns.insert(fired(seed));
    if (fired(seed).find('1') != std::string::npos) ++enabled;
  }
  EXPECT_GT(enabled, 0) << "some seeds must enable the site";
  EXPECT_LT(enabled, 20) << "some seeds must leave the site off";
  SimRuntime off(SimRuntimeOptions{.seed = 1, .buggify = false});
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(off.Buggify("renew.slow"));
  SimRuntime forced(SimRuntimeOptions{.seed = 1, .buggify_fire_probability = 1.0});
  forced.ForceBuggify("x", true);
  EXPECT_TRUE(forced.Buggify("x"));
  EXPECT_EQ(forced.BuggifyFired(), (std::vector<std::pair<std::string, uint64_t>>{{"x", 1}}));
}

TEST(SimRuntimeTest, ExceptionInThreadComesOutOfRunUntil) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  Thread t = rt.SpawnOn(node, "thrower", [&] {
    rt.SleepFor(milliseconds(1));
    throw std::runtime_error("thrower failed");
  });
  EXPECT_THROW(rt.RunUntil(INT64_MAX), std::runtime_error);
}

TEST(SimRuntimeTest, LivelockExhaustsTheEventBudgetInsteadOfRunningForever) {
  SimRuntime rt(SimRuntimeOptions{.seed = 1, .max_steps_per_instant = 1000});
  const int node = rt.AddNode("n0");
  bool stop = false;
  // Two threads that hand the CPU to each other for ever while the clock stands still.
  auto spin = [&] {
    while (!stop) rt.Yield();
  };
  Thread a = rt.SpawnOn(node, "spin_a", spin);
  Thread b = rt.SpawnOn(node, "spin_b", spin);
  try {
    rt.RunUntil(INT64_MAX);
    FAIL() << "RunUntil returned although no time can pass";
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("event budget exhausted: 1000 steps at true time 0 ns"), std::string::npos) << what;
    EXPECT_NE(what.find("'spin_a'"), std::string::npos) << "the report must name the spinning threads: " << what;
  }
  stop = true;  // the handles join below
  a.Join();
  b.Join();
}

TEST(SimRuntimeTest, EventsThatRescheduleThemselvesAtTheSameTimeExhaustTheBudget) {
  SimRuntime rt(SimRuntimeOptions{.seed = 1, .max_steps_per_instant = 500});
  rt.AddNode("n0");
  std::function<void()> again = [&] { rt.At(rt.true_now(), again); };
  rt.At(5 * kMs, again);
  EXPECT_THROW(rt.RunUntil(INT64_MAX), std::logic_error);
  EXPECT_EQ(rt.true_now(), 5 * kMs);
}

TEST(SimRuntimeTest, TheBudgetCountsStepsPerInstantNotPerRun) {
  // 2000 steps in all, spread over 2000 instants: far past a budget of 100 for the run, within it
  // at every instant.
  SimRuntime rt(SimRuntimeOptions{.seed = 1, .max_steps_per_instant = 100});
  const int node = rt.AddNode("n0");
  int ticks = 0;
  Thread t = rt.SpawnOn(node, "ticker", [&] {
    for (; ticks < 2000; ++ticks) rt.SleepFor(milliseconds(1));
  });
  EXPECT_EQ(rt.RunUntil(INT64_MAX), SimRuntime::StopReason::kAllDone);
  EXPECT_EQ(ticks, 2000);
}

TEST(SimRuntimeTest, SchedulerContextCannotBlock) {
  SimRuntime rt;
  const int node = rt.AddNode("n0");
  Mutex mu(rt);
  Thread t = rt.SpawnOn(node, "holder", [&] {
    MutexLock lock(mu);
    rt.SleepFor(seconds(1));
  });
  rt.RunUntil(kMs);
  try {
    mu.Lock();
    FAIL() << "taking a held mutex from the scheduler context must fail";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("held by 'holder'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rt.SleepFor(seconds(1)), std::logic_error);
  t.Join();
}

TEST(SimRuntimeTest, DestroyingRuntimeUnwindsBlockedThreads) {
  int unwound = 0;
  struct Guard {
    int* counter;
    ~Guard() { ++*counter; }
  };
  // The objects the stuck thread uses must outlive the runtime that unwinds it.
  std::unique_ptr<Mutex> mu;
  std::unique_ptr<CondVar> cv;
  {
    SimRuntime rt;
    const int node = rt.AddNode("n0");
    mu = std::make_unique<Mutex>(rt);
    cv = std::make_unique<CondVar>(rt);
    Thread t = rt.SpawnOn(node, "stuck", [&] {
      Guard guard{&unwound};
      MutexLock lock(*mu);
      cv->Wait(*mu);
    });
    rt.RunUntil(kMs);
    rt.CrashNode(node);  // joining a crashed thread from the driver returns at once
    t.Join();
    EXPECT_EQ(unwound, 0);
  }
  EXPECT_EQ(unwound, 1) << "the runtime must unwind the stack of a thread that never finished";
}

}  // namespace
}  // namespace kvchaos::sim
