// Properties of the simulator's runtime pieces: a clock's inverse always names the earliest true
// time a deadline is reached, whatever its offset, drift and steps; the production meta index, as
// the simulator hosts it, never lets a stale write in, for any interleaving of writers and tokens; and any program of threads taking a
// mutex and sleeping runs one thread at a time, replays identically from its seed, and ends.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "sim/sim_clock.h"
#include "sim/sim_meta_index.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {
namespace {

RC_GTEST_PROP(SimProperties, ClockInverseIsTheEarliestTrueTime, ()) {
  const int64_t offset_ns = *rc::gen::inRange<int64_t>(0, 10'000'000'000'000);
  const int64_t drift = *rc::gen::inRange<int64_t>(-100'000, 100'000);
  SimClock clock(Duration(offset_ns), drift);
  const int64_t step_at = *rc::gen::inRange<int64_t>(0, 100'000'000'000);
  if (*rc::gen::arbitrary<bool>()) clock.StepMonoForward(Duration(*rc::gen::inRange<int64_t>(0, 5'000'000'000)), step_at);
  if (*rc::gen::arbitrary<bool>()) clock.SetDriftPpm(*rc::gen::inRange<int64_t>(-100'000, 100'000), step_at);
  const int64_t target_delta = *rc::gen::inRange<int64_t>(1, 1'000'000'000'000);
  const MonoTime target = clock.MonoAt(step_at) + Duration(target_delta);
  const TrueNs t = clock.TrueWhenMonoReaches(target, step_at);
  RC_ASSERT(clock.MonoAt(t) >= target);
  RC_ASSERT(t == step_at || clock.MonoAt(t - 1) < target);
}

RC_GTEST_PROP(SimProperties, TheMetaIndexNeverAcceptsAStaleWrite,
              (const std::vector<std::pair<uint8_t, uint8_t>>& writes)) {
  SimRuntime rt;
  const int host = rt.AddNode("meta-index");
  SimMetaIndex index(rt, host, nullptr);
  uint64_t newest_accepted = 0;
  for (const auto& [node, token] : writes) {
    MetaIndexRequest put;
    put.op = MetaIndexRequest::Op::kPut;
    put.token = token;
    put.writes = {meta::MetaWrite{"k" + std::to_string(node % 4), {{"f", "v"}}}};
    put.from_host = node % 4;
    const Status s = index.Apply(put).status;
    if (s.ok()) {
      RC_ASSERT(token >= newest_accepted);
      newest_accepted = token;
    } else {
      RC_ASSERT(s.code() == StatusCode::kStaleFencingToken);
    }
  }
  RC_ASSERT(index.counters().stale_accepted == 0u);
  RC_ASSERT(index.counters().accepted + index.counters().rejected == writes.size());
}

// Each thread runs a list of steps: 0 = lock, work, unlock; 1..N = sleep that many ms.
struct Outcome {
  std::vector<int> order;
  uint64_t hash = 0;
  bool overlap = false;
  SimRuntime::StopReason reason = SimRuntime::StopReason::kTimeReached;
};

Outcome RunProgram(uint64_t seed, const std::vector<std::vector<uint8_t>>& program) {
  SimRuntime rt(SimRuntimeOptions{.seed = seed});
  const int node = rt.AddNode("n1");
  Mutex mu(rt);
  Outcome out;
  bool inside = false;
  std::vector<Thread> threads;
  for (size_t i = 0; i < program.size(); ++i) {
    threads.push_back(rt.SpawnOn(node, "t" + std::to_string(i), [&, i] {
      for (uint8_t step : program[i]) {
        if (step % 4 == 0) {
          MutexLock lock(mu);
          if (inside) out.overlap = true;
          inside = true;
          out.order.push_back(static_cast<int>(i));
          inside = false;
        } else {
          rt.SleepFor(Millis(step % 4));
        }
      }
    }));
  }
  out.reason = rt.RunUntil(INT64_MAX);
  out.hash = rt.trace().hash();
  return out;
}

RC_GTEST_PROP(SimProperties, ThreadProgramsReplayAndNeverOverlap, ()) {
  const auto program = *rc::gen::resize(6, rc::gen::nonEmpty(rc::gen::container<std::vector<std::vector<uint8_t>>>(
      rc::gen::container<std::vector<uint8_t>>(rc::gen::arbitrary<uint8_t>()))));
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  const Outcome a = RunProgram(seed, program);
  const Outcome b = RunProgram(seed, program);
  RC_ASSERT(!a.overlap);
  RC_ASSERT(a.reason == SimRuntime::StopReason::kAllDone);
  RC_ASSERT(a.order == b.order);
  RC_ASSERT(a.hash == b.hash);
}

}  // namespace
}  // namespace kvchaos::sim
