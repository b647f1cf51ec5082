// SimRuntime: kvchaos::Runtime under virtual time, the heart of the deterministic simulator.
//
// Simulated threads are fibers (sim/fiber.h) and exactly one runs at a time. Whenever the running
// thread blocks or reaches a scheduling point (taking a mutex while others are runnable), the
// scheduler picks the next runnable thread with the seeded Rng (candidates ordered by sequence
// number, so the choice is a pure function of the seed); when nothing is runnable, true time jumps
// to the next wake-up or scheduled event. Each node has its own SimClock, so Now()/WallNow() and
// deadlines are read on the calling thread's node clock. Nodes can be paused (a GC pause or
// SIGSTOP: nothing of the node runs until resumed), crashed (its threads freeze for good and are
// only unwound when the run ends) or slowed (every wake-up of its threads is delayed). Buggify
// sites are switched on per run from the seed. Every decision goes into the Trace.
//
// Calls from outside a simulated thread (the driver, scheduled events) run on the "scheduler
// context": they may read clocks, notify, spawn and take a free mutex, but never block.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/rng.h"
#include "core/common/runtime.h"
#include "sim/sim_clock.h"
#include "sim/trace.h"

namespace kvchaos::sim {

struct SimRuntimeOptions {
  uint64_t seed = 1;
  size_t stack_bytes = 256 * 1024;
  uint64_t checkpoint_every = 4096;
  // Buggify: a site is enabled in a run with `site_probability` (decided from the seed and the
  // site name), an enabled site fires on each call with `fire_probability`.
  bool buggify = true;
  double buggify_site_probability = 0.25;
  double buggify_fire_probability = 0.05;
  // Taking a mutex is a scheduling point when other threads are runnable (explores interleavings).
  bool preempt_on_lock = true;
  // The driver's Join of a thread runs the simulation at most this much further (0: without
  // bound); a thread still running then is left, and shows in ThreadReport().
  int64_t driver_join_budget_ns = 0;
  // RunUntil's event budget: at most this many steps (thread runs and events) at one true time.
  // Past it the run is a livelock (threads that wake each other, or events that schedule events,
  // without time passing): RunUntil throws naming the time and the threads (0: without bound).
  uint64_t max_steps_per_instant = 10'000'000;
};

class SimThread;
class SimMutex;
class SimCondVar;

class SimRuntime final : public Runtime {
 public:
  enum class StopReason { kTimeReached, kAllDone, kDeadlock, kStopRequested };

  explicit SimRuntime(SimRuntimeOptions options = {});
  // Unwinds threads that never finished (crashed nodes, deadlocked tests) in sequence order.
  ~SimRuntime() override;
  SimRuntime(const SimRuntime&) = delete;
  SimRuntime& operator=(const SimRuntime&) = delete;

  // --- Nodes -------------------------------------------------------------------------------
  // Adds a node with its own clock; returns its index (0, 1, ...).
  int AddNode(std::string name, SimClock clock = SimClock());
  int node_count() const { return static_cast<int>(nodes_.size()); }
  const std::string& node_name(int node) const;
  const SimClock& clock(int node) const;
  void SetDriftPpm(int node, int64_t drift_ppm);
  void StepMonoForward(int node, Duration forward);
  void StepWall(int node, Duration delta);
  // Freezes (true) or resumes (false) every thread of the node.
  void SetPaused(int node, bool paused);
  bool paused(int node) const;
  // Freezes every current thread of the node for good (a process crash); threads spawned on the
  // node later (the restarted process) run normally.
  void CrashNode(int node);
  // Every wake-up of the node's threads is delayed by `delay` (zero: normal speed).
  void SetSlowCpu(int node, Duration delay);
  // Lets the frozen threads of crashed incarnations of `node` run again, to shut them down at
  // the end of a run. Their node must be cut off from the world by the caller first.
  void ReviveCrashed(int node);

  // Makes scheduler-context calls (Spawn, Now, ...) act as if on `node` while in scope.
  class NodeScope {
   public:
    NodeScope(SimRuntime& runtime, int node) : runtime_(runtime), saved_(runtime.scope_node_) {
      runtime.scope_node_ = node;
    }
    ~NodeScope() { runtime_.scope_node_ = saved_; }
    NodeScope(const NodeScope&) = delete;
    NodeScope& operator=(const NodeScope&) = delete;

   private:
    SimRuntime& runtime_;
    int saved_;
  };

  // --- Runtime -----------------------------------------------------------------------------
  MonoTime Now() override;
  WallTime WallNow() override;
  void SleepUntil(MonoTime deadline) override;
  Thread Spawn(std::string name, std::function<void()> fn) override;
  std::unique_ptr<MutexImpl> NewMutex() override;
  std::unique_ptr<CondVarImpl> NewCondVar() override;
  bool Buggify(std::string_view site) override;

  Thread SpawnOn(int node, std::string name, std::function<void()> fn);
  // Lets other runnable threads run first (a scheduling point) when called from a thread.
  void Yield();

  // --- Driving -----------------------------------------------------------------------------
  TrueNs true_now() const { return now_; }
  // Runs `fn` on the scheduler context at true time `t` (not before now).
  void At(TrueNs t, std::function<void()> fn);
  void After(Duration d, std::function<void()> fn) { At(now_ + d.count(), std::move(fn)); }
  // Runs threads and events until true time `t`, nothing is left to do, a deadlock, or
  // RequestStop(). An exception thrown by a simulated thread comes out of here, and so does the
  // error of an exhausted event budget (SimRuntimeOptions::max_steps_per_instant).
  StopReason RunUntil(TrueNs t);
  // Stops RunUntil at the next scheduling point.
  void RequestStop() { stop_requested_ = true; }

  // The node of the calling thread (or the NodeScope's node on the scheduler context; -1: none).
  int current_node() const;
  // The calling thread's name ("scheduler" on the scheduler context).
  const std::string& current_thread_name() const;
  bool in_simulated_thread() const { return current_ != nullptr; }

  // Every unfinished thread: node, name, state and what it waits on (for deadlock reports).
  std::string ThreadReport() const;
  uint64_t threads_started() const { return threads_.size(); }
  uint64_t context_switches() const { return switches_; }
  // Sites that fired at least once, with counts (sorted by name).
  std::vector<std::pair<std::string, uint64_t>> BuggifyFired() const;
  // Forces a buggify site on or off for this run (tests, planted scenarios).
  void ForceBuggify(std::string_view site, bool enabled);

  Trace& trace() { return trace_; }
  uint64_t seed() const { return options_.seed; }

  // Internal, used by SimMutex / SimCondVar / SimThreadHandle.
  void MutexLock(SimMutex& mu);
  void MutexUnlock(SimMutex& mu);
  bool CondWait(SimCondVar& cv, SimMutex& mu, std::optional<MonoTime> deadline);
  void CondNotify(SimCondVar& cv, bool all);
  void JoinThread(SimThread& thread);
  uint64_t NextObjectId() { return ++object_ids_; }

 private:
  struct Node;
  struct TimerEntry {
    TrueNs t;
    uint64_t seq;
    SimThread* thread;  // wake-up of a timed wait or a delayed run; null: callback
    uint32_t generation;
    uint32_t callback;
    bool operator>(const TimerEntry& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  struct BuggifySite {
    bool enabled = false;
    Rng rng{0};
    uint64_t fired = 0;
  };

  SimThread* Self(std::string_view operation) const;
  [[noreturn]] void Fail(const std::string& message) const;
  void MakeRunnable(SimThread* thread);
  void RunnableInsert(SimThread* thread);
  void RunnableErase(SimThread* thread);
  void Block(SimThread* self, const char* what, uint64_t object, std::optional<TrueNs> wake_at);
  void ArmTimer(SimThread* thread, TrueNs t);
  void CancelTimer(SimThread* thread);
  void PushTimer(const TimerEntry& entry);
  void PopTimer();
  void RebuildTimers();
  void CompactTimers();
  void RearmNodeTimers(int node);
  void OnTimer(const TimerEntry& entry);
  void RunThread(SimThread* thread);
  void ThreadExited(SimThread* thread);
  std::string ThreadName(int node, uint64_t thread) const;
  bool AnyBlocked() const;

  SimRuntimeOptions options_;
  Rng sched_rng_;
  Rng buggify_rng_;
  Trace trace_;
  TrueNs now_ = 0;
  uint64_t seq_ = 0;
  uint64_t object_ids_ = 0;
  uint64_t switches_ = 0;
  bool in_scheduler_loop_ = false;
  bool tearing_down_ = false;
  bool stop_requested_ = false;
  int scope_node_ = -1;
  SimThread* current_ = nullptr;
  SimThread* driver_join_ = nullptr;  // the thread the driver's Join runs the simulation for
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<SimThread>> threads_;  // by sequence number - 1
  std::vector<SimThread*> runnable_;                 // ordered by sequence number
  // A 4-ary min-heap on (time, sequence) with lazy cancellation; compacted when more than
  // half of it is cancelled entries.
  std::vector<TimerEntry> timers_;
  uint64_t stale_timers_ = 0;
  std::vector<std::function<void()>> callbacks_;
  std::vector<size_t> free_callbacks_;
  std::map<std::string, BuggifySite, std::less<>> buggify_sites_;
  std::string scheduler_name_ = "scheduler";
};

}  // namespace kvchaos::sim
