// The scheduler loop, waits and wake-ups of SimRuntime. A thread blocks by recording what it
// waits on and suspending its fiber; whoever satisfies the wait (an unlock, a notify, a timer,
// an exiting thread) makes it runnable again. Timers are a heap of (true time, sequence) with
// lazy cancellation by generation number, so re-arming after a clock step is cheap.
#include "sim/sim_runtime.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

#include "sim/fiber.h"

namespace kvchaos::sim {

class SimThread {
 public:
  enum class State { kRunnable, kRunning, kBlocked, kDone };

  uint64_t id = 0;  // sequence number, from 1
  std::string name;
  int node = -1;
  std::unique_ptr<Fiber> fiber;
  State state = State::kRunnable;
  bool crashed = false;  // frozen for good (its node crashed)
  bool parked = false;   // runnable, but held back by a paused or crashed node
  bool queued = false;   // in the runnable list
  // What a blocked thread waits on.
  const char* wait_what = "";
  uint64_t wait_object = 0;
  SimCondVar* wait_cv = nullptr;
  SimMutex* wait_mutex = nullptr;
  std::optional<MonoTime> wait_deadline_local;  // timed wait, on the node's clock
  std::optional<TrueNs> wait_deadline_true;     // timed wait on true time (slow-CPU delay)
  uint32_t timer_generation = 0;
  bool timer_armed = false;  // a live entry of this thread is in the timer heap
  bool timed_out = false;
  std::vector<SimThread*> joiners;
};

class SimMutex final : public MutexImpl {
 public:
  explicit SimMutex(SimRuntime& runtime) : runtime_(runtime), id(runtime.NextObjectId()) {}
  void Lock() override { runtime_.MutexLock(*this); }
  void Unlock() override { runtime_.MutexUnlock(*this); }

  SimRuntime& runtime_;
  const uint64_t id;
  SimThread* owner = nullptr;
  bool owned_by_scheduler = false;
  std::vector<SimThread*> waiters;
};

class SimCondVar final : public CondVarImpl {
 public:
  explicit SimCondVar(SimRuntime& runtime) : runtime_(runtime), id(runtime.NextObjectId()) {}
  bool WaitUntil(MutexImpl& mu, MonoTime deadline) override {
    return runtime_.CondWait(*this, static_cast<SimMutex&>(mu), deadline);
  }
  void Wait(MutexImpl& mu) override { runtime_.CondWait(*this, static_cast<SimMutex&>(mu), std::nullopt); }
  void NotifyOne() override { runtime_.CondNotify(*this, false); }
  void NotifyAll() override { runtime_.CondNotify(*this, true); }

  SimRuntime& runtime_;
  const uint64_t id;
  std::vector<SimThread*> waiters;
};

namespace {

class SimThreadHandle final : public ThreadImpl {
 public:
  SimThreadHandle(SimRuntime& runtime, SimThread& thread) : runtime_(runtime), thread_(thread) {}
  void Join() override { runtime_.JoinThread(thread_); }

 private:
  SimRuntime& runtime_;
  SimThread& thread_;
};

constexpr TraceTag kRunTag("run");
constexpr TraceTag kYieldTag("yield");
constexpr TraceTag kWakeTimerTag("wake-timer");
constexpr TraceTag kExitTag("exit");

void EraseOne(std::vector<SimThread*>& list, SimThread* thread) {
  auto it = std::find(list.begin(), list.end(), thread);
  if (it != list.end()) list.erase(it);
}

}  // namespace

struct SimRuntime::Node {
  std::string name;
  SimClock clock;
  bool paused = false;
  int64_t slow_ns = 0;
  std::vector<SimThread*> threads;
};

SimRuntime::SimRuntime(SimRuntimeOptions options)
    : options_(options),
      sched_rng_(Rng(options.seed).Split("scheduler")),
      buggify_rng_(Rng(options.seed).Split("buggify")),
      trace_(options.checkpoint_every) {
  trace_.SetNamer([this](int node, uint64_t thread) { return ThreadName(node, thread); });
}

SimRuntime::~SimRuntime() {
  // Threads still suspended are unwound (Boost throws forced_unwind on their stacks). Their
  // destructors may call back into us, so keep every structure alive until all are gone.
  tearing_down_ = true;
  for (size_t i = 0; i < threads_.size(); ++i) {  // by index: an unwinding thread may spawn
    SimThread* thread = threads_[i].get();
    if (thread->fiber && !thread->fiber->finished()) {
      current_ = thread;
      thread->fiber.reset();
      current_ = nullptr;
    }
  }
}

void SimRuntime::Fail(const std::string& message) const {
  throw std::logic_error("simulator: " + message);
}

SimThread* SimRuntime::Self(std::string_view operation) const {
  if (current_ == nullptr) {
    Fail(std::string(operation) + " called outside a simulated thread (the scheduler context cannot block)");
  }
  return current_;
}

int SimRuntime::AddNode(std::string name, SimClock clock) {
  auto node = std::make_unique<Node>();
  node->name = std::move(name);
  node->clock = clock;
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size()) - 1;
}

const std::string& SimRuntime::node_name(int node) const { return nodes_.at(static_cast<size_t>(node))->name; }
const SimClock& SimRuntime::clock(int node) const { return nodes_.at(static_cast<size_t>(node))->clock; }

void SimRuntime::SetDriftPpm(int node, int64_t drift_ppm) {
  nodes_.at(static_cast<size_t>(node))->clock.SetDriftPpm(drift_ppm, now_);
  trace_.Event(now_, node, 0, "clock-drift", drift_ppm);
  RearmNodeTimers(node);
}

void SimRuntime::StepMonoForward(int node, Duration forward) {
  nodes_.at(static_cast<size_t>(node))->clock.StepMonoForward(forward, now_);
  trace_.Event(now_, node, 0, "clock-step-mono", forward.count());
  RearmNodeTimers(node);
}

void SimRuntime::StepWall(int node, Duration delta) {
  nodes_.at(static_cast<size_t>(node))->clock.StepWall(delta);
  trace_.Event(now_, node, 0, "clock-step-wall", delta.count());
}

void SimRuntime::SetPaused(int node, bool paused) {
  Node& n = *nodes_.at(static_cast<size_t>(node));
  if (n.paused == paused) return;
  n.paused = paused;
  trace_.Event(now_, node, 0, paused ? "node-pause" : "node-resume");
  for (SimThread* thread : n.threads) {
    if (paused && thread->queued) {
      RunnableErase(thread);
      thread->parked = true;
    } else if (!paused && thread->parked && !thread->crashed) {
      thread->parked = false;
      RunnableInsert(thread);
    }
  }
}

bool SimRuntime::paused(int node) const { return nodes_.at(static_cast<size_t>(node))->paused; }

void SimRuntime::CrashNode(int node) {
  Node& n = *nodes_.at(static_cast<size_t>(node));
  trace_.Event(now_, node, 0, "node-crash");
  for (SimThread* thread : n.threads) {
    if (thread->state == SimThread::State::kDone || thread->crashed) continue;
    thread->crashed = true;
    if (thread->queued) {
      RunnableErase(thread);
      thread->parked = true;
    }
  }
}

void SimRuntime::SetSlowCpu(int node, Duration delay) {
  nodes_.at(static_cast<size_t>(node))->slow_ns = delay.count();
  trace_.Event(now_, node, 0, "node-slow-cpu", delay.count());
}

void SimRuntime::ReviveCrashed(int node) {
  Node& n = *nodes_.at(static_cast<size_t>(node));
  trace_.Event(now_, node, 0, "node-revive-crashed");
  for (SimThread* thread : n.threads) {
    if (!thread->crashed) continue;
    thread->crashed = false;
    if (thread->parked && !n.paused) {
      thread->parked = false;
      RunnableInsert(thread);
    }
  }
}

int SimRuntime::current_node() const { return current_ ? current_->node : scope_node_; }

const std::string& SimRuntime::current_thread_name() const { return current_ ? current_->name : scheduler_name_; }

MonoTime SimRuntime::Now() {
  const int node = current_node();
  if (node < 0) return MonoTime(Duration(now_));
  return nodes_[static_cast<size_t>(node)]->clock.MonoAt(now_);
}

WallTime SimRuntime::WallNow() {
  const int node = current_node();
  if (node < 0) return WallTime(Duration(now_));
  return nodes_[static_cast<size_t>(node)]->clock.WallAt(now_);
}

void SimRuntime::SleepUntil(MonoTime deadline) {
  if (tearing_down_) return;
  SimThread* self = Self("SleepUntil");
  self->wait_deadline_local = deadline;
  const TrueNs wake = self->node < 0 ? std::max<TrueNs>(now_, deadline.time_since_epoch().count())
                                     : nodes_[static_cast<size_t>(self->node)]->clock.TrueWhenMonoReaches(deadline, now_);
  if (wake <= now_) {
    self->wait_deadline_local.reset();
    Yield();
    return;
  }
  Block(self, "sleep", 0, wake);
}

Thread SimRuntime::Spawn(std::string name, std::function<void()> fn) {
  return SpawnOn(current_node(), std::move(name), std::move(fn));
}

Thread SimRuntime::SpawnOn(int node, std::string name, std::function<void()> fn) {
  if (node >= node_count()) Fail("SpawnOn: no node " + std::to_string(node));
  auto thread = std::make_unique<SimThread>();
  SimThread* t = thread.get();
  t->id = threads_.size() + 1;
  t->name = std::move(name);
  t->node = node;
  t->fiber = std::make_unique<Fiber>(std::move(fn), options_.stack_bytes);
  threads_.push_back(std::move(thread));
  if (node >= 0) nodes_[static_cast<size_t>(node)]->threads.push_back(t);
  trace_.Event(now_, node, t->id, "spawn", current_ ? static_cast<int64_t>(current_->id) : 0, 0, t->name);
  t->state = SimThread::State::kRunnable;
  MakeRunnable(t);
  return Thread(std::make_unique<SimThreadHandle>(*this, *t));
}

std::unique_ptr<MutexImpl> SimRuntime::NewMutex() { return std::make_unique<SimMutex>(*this); }
std::unique_ptr<CondVarImpl> SimRuntime::NewCondVar() { return std::make_unique<SimCondVar>(*this); }

bool SimRuntime::Buggify(std::string_view site) {
  if (!options_.buggify) return false;
  auto it = buggify_sites_.find(site);
  if (it == buggify_sites_.end()) {
    BuggifySite s;
    // Enabled or not is a function of (seed, site name) alone, whatever order sites are met in.
    s.rng = buggify_rng_.Split(site);
    s.enabled = s.rng.Bernoulli(options_.buggify_site_probability);
    it = buggify_sites_.emplace(std::string(site), s).first;
  }
  BuggifySite& s = it->second;
  if (!s.enabled || !s.rng.Bernoulli(options_.buggify_fire_probability)) return false;
  ++s.fired;
  trace_.Event(now_, current_node(), current_ ? current_->id : 0, "buggify", 0, 0, site);
  return true;
}

void SimRuntime::ForceBuggify(std::string_view site, bool enabled) {
  BuggifySite s;
  s.rng = buggify_rng_.Split(site);
  s.enabled = enabled;
  buggify_sites_[std::string(site)] = s;
}

std::vector<std::pair<std::string, uint64_t>> SimRuntime::BuggifyFired() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const auto& [name, site] : buggify_sites_) {
    if (site.fired > 0) out.emplace_back(name, site.fired);
  }
  return out;
}

void SimRuntime::Yield() {
  if (tearing_down_) return;
  SimThread* self = current_;
  if (self == nullptr || runnable_.empty()) return;
  trace_.Event(now_, self->node, self->id, kYieldTag);
  self->state = SimThread::State::kRunnable;
  RunnableInsert(self);
  self->fiber->Suspend();
}

void SimRuntime::RunnableInsert(SimThread* thread) {
  auto it = std::lower_bound(runnable_.begin(), runnable_.end(), thread,
                             [](const SimThread* a, const SimThread* b) { return a->id < b->id; });
  runnable_.insert(it, thread);
  thread->queued = true;
}

void SimRuntime::RunnableErase(SimThread* thread) {
  auto it = std::lower_bound(runnable_.begin(), runnable_.end(), thread,
                             [](const SimThread* a, const SimThread* b) { return a->id < b->id; });
  if (it != runnable_.end() && *it == thread) runnable_.erase(it);
  thread->queued = false;
}

void SimRuntime::MakeRunnable(SimThread* thread) {
  thread->state = SimThread::State::kRunnable;
  thread->wait_what = "";
  thread->wait_object = 0;
  thread->wait_cv = nullptr;
  thread->wait_mutex = nullptr;
  thread->wait_deadline_local.reset();
  thread->wait_deadline_true.reset();
  CancelTimer(thread);  // a pending timed wake-up is void now
  if (thread->node >= 0) {
    Node& n = *nodes_[static_cast<size_t>(thread->node)];
    if (n.slow_ns > 0 && !thread->crashed) {
      // Slow CPU: the thread gets the processor only `slow_ns` later.
      thread->state = SimThread::State::kBlocked;
      thread->wait_what = "slow-cpu";
      thread->wait_deadline_true = now_ + n.slow_ns;
      ArmTimer(thread, now_ + n.slow_ns);
      return;
    }
    if (n.paused || thread->crashed) {
      thread->parked = true;
      return;
    }
  }
  RunnableInsert(thread);
}

void SimRuntime::ArmTimer(SimThread* thread, TrueNs t) {
  CancelTimer(thread);
  thread->timer_armed = true;
  PushTimer(TimerEntry{t, ++seq_, thread, thread->timer_generation, 0});
}

// A 4-ary min-heap on (t, seq): half the depth of a binary heap, and the four children of a
// node share a cache line or two.
void SimRuntime::PushTimer(const TimerEntry& entry) {
  size_t i = timers_.size();
  timers_.push_back(entry);
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!(timers_[parent] > entry)) break;
    timers_[i] = timers_[parent];
    i = parent;
  }
  timers_[i] = entry;
}

void SimRuntime::CancelTimer(SimThread* thread) {
  ++thread->timer_generation;
  if (thread->timer_armed) {
    thread->timer_armed = false;
    if (++stale_timers_ > 32 && stale_timers_ * 2 > timers_.size()) CompactTimers();
  }
}

void SimRuntime::PopTimer() {
  const TimerEntry last = timers_.back();
  timers_.pop_back();
  const size_t n = timers_.size();
  if (n == 0) return;
  size_t i = 0;
  while (true) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = std::min(first + 4, n);
    for (size_t c = first + 1; c < end; ++c) {
      if (timers_[best] > timers_[c]) best = c;
    }
    if (!(last > timers_[best])) break;
    timers_[i] = timers_[best];
    i = best;
  }
  timers_[i] = last;
}

void SimRuntime::RebuildTimers() {
  std::vector<TimerEntry> entries;
  entries.swap(timers_);
  std::sort(entries.begin(), entries.end(), [](const TimerEntry& a, const TimerEntry& b) { return b > a; });
  timers_ = std::move(entries);  // a sorted array is a valid heap
}

void SimRuntime::CompactTimers() {
  // Dropping cancelled entries changes nothing observable: order is by (time, sequence).
  std::erase_if(timers_, [](const TimerEntry& e) {
    return e.thread != nullptr && (e.generation != e.thread->timer_generation || !e.thread->timer_armed);
  });
  RebuildTimers();
  stale_timers_ = 0;
}

void SimRuntime::Block(SimThread* self, const char* what, uint64_t object, std::optional<TrueNs> wake_at) {
  self->state = SimThread::State::kBlocked;
  self->wait_what = what;
  self->wait_object = object;
  self->timed_out = false;
  CancelTimer(self);
  if (wake_at) {
    if (!self->wait_deadline_local) self->wait_deadline_true = *wake_at;
    ArmTimer(self, *wake_at);
  }
  self->fiber->Suspend();
}

void SimRuntime::RearmNodeTimers(int node) {
  Node& n = *nodes_.at(static_cast<size_t>(node));
  for (SimThread* thread : n.threads) {
    if (thread->state != SimThread::State::kBlocked || !thread->wait_deadline_local) continue;
    ArmTimer(thread, n.clock.TrueWhenMonoReaches(*thread->wait_deadline_local, now_));
  }
}

void SimRuntime::OnTimer(const TimerEntry& entry) {
  SimThread* thread = entry.thread;
  if (entry.generation != thread->timer_generation || thread->state != SimThread::State::kBlocked) return;
  thread->timer_armed = false;
  trace_.Event(now_, thread->node, thread->id, kWakeTimerTag);
  if (std::string_view(thread->wait_what) == "slow-cpu") {
    thread->state = SimThread::State::kRunnable;
    thread->wait_what = "";
    thread->wait_deadline_true.reset();
    ++thread->timer_generation;
    if (thread->crashed || nodes_[static_cast<size_t>(thread->node)]->paused) {
      thread->parked = true;
    } else {
      RunnableInsert(thread);
    }
    return;
  }
  if (thread->wait_cv != nullptr) EraseOne(thread->wait_cv->waiters, thread);
  thread->timed_out = true;
  MakeRunnable(thread);
}

void SimRuntime::At(TrueNs t, std::function<void()> fn) {
  size_t slot;
  if (!free_callbacks_.empty()) {
    slot = free_callbacks_.back();
    free_callbacks_.pop_back();
    callbacks_[slot] = std::move(fn);
  } else {
    slot = callbacks_.size();
    callbacks_.push_back(std::move(fn));
  }
  PushTimer(TimerEntry{std::max(t, now_), ++seq_, nullptr, 0, static_cast<uint32_t>(slot)});
}

void SimRuntime::RunThread(SimThread* thread) {
  ++switches_;
  trace_.Event(now_, thread->node, thread->id, kRunTag);
  thread->state = SimThread::State::kRunning;
  current_ = thread;
  try {
    thread->fiber->Resume();
  } catch (...) {
    current_ = nullptr;
    if (thread->fiber->finished()) ThreadExited(thread);
    throw;
  }
  current_ = nullptr;
  if (thread->fiber->finished()) ThreadExited(thread);
}

void SimRuntime::ThreadExited(SimThread* thread) {
  thread->state = SimThread::State::kDone;
  thread->fiber.reset();  // frees the stack now, not at the end of the run
  trace_.Event(now_, thread->node, thread->id, kExitTag);
  if (thread == driver_join_) stop_requested_ = true;  // the driver's Join returns now
  for (SimThread* joiner : thread->joiners) MakeRunnable(joiner);
  thread->joiners.clear();
}

bool SimRuntime::AnyBlocked() const {
  for (const auto& thread : threads_) {
    if (thread->state != SimThread::State::kDone && !thread->crashed) return true;
  }
  return false;
}

SimRuntime::StopReason SimRuntime::RunUntil(TrueNs t) {
  if (in_scheduler_loop_ || current_ != nullptr) Fail("RunUntil called from inside the simulation");
  in_scheduler_loop_ = true;
  stop_requested_ = false;
  struct Exit {
    bool& flag;
    ~Exit() { flag = false; }
  } exit{in_scheduler_loop_};
  TrueNs budget_at = now_;  // the time the steps are counted at
  uint64_t steps = 0;
  while (true) {
    if (now_ != budget_at) {
      budget_at = now_;
      steps = 0;
    }
    if (options_.max_steps_per_instant > 0 && ++steps > options_.max_steps_per_instant) {
      trace_.Event(now_, -1, 0, "event-budget");
      Fail("event budget exhausted: " + std::to_string(options_.max_steps_per_instant) +
           " steps at true time " + std::to_string(now_) + " ns without time passing (a livelock); threads:\n" +
           ThreadReport());
    }
    if (stop_requested_) {
      stop_requested_ = false;
      return StopReason::kStopRequested;
    }
    if (!runnable_.empty()) {
      // Candidates are ordered by sequence number, so the seeded choice is reproducible.
      const size_t index = runnable_.size() == 1 ? 0 : static_cast<size_t>(sched_rng_.Uniform(runnable_.size()));
      SimThread* thread = runnable_[index];
      runnable_.erase(runnable_.begin() + static_cast<std::ptrdiff_t>(index));
      thread->queued = false;
      RunThread(thread);
      continue;
    }
    if (timers_.empty()) {
      if (AnyBlocked()) {
        trace_.Event(now_, -1, 0, "deadlock");
        return StopReason::kDeadlock;
      }
      // Nothing left to happen: time still passes up to `t` (unless that is "forever").
      if (t != std::numeric_limits<TrueNs>::max()) now_ = std::max(now_, t);
      return StopReason::kAllDone;
    }
    const TimerEntry entry = timers_.front();
    if (entry.thread != nullptr && (entry.generation != entry.thread->timer_generation ||
                                    entry.thread->state != SimThread::State::kBlocked)) {
      PopTimer();  // a cancelled wake-up: time must not move for it
      if (stale_timers_ > 0) --stale_timers_;
      continue;
    }
    if (entry.t > t) {
      now_ = std::max(now_, t);
      return StopReason::kTimeReached;
    }
    PopTimer();
    now_ = std::max(now_, entry.t);
    if (entry.thread != nullptr) {
      OnTimer(entry);
    } else {
      std::function<void()> fn = std::move(callbacks_[entry.callback]);
      callbacks_[entry.callback] = nullptr;
      free_callbacks_.push_back(entry.callback);
      fn();
    }
  }
}

void SimRuntime::MutexLock(SimMutex& mu) {
  if (tearing_down_) {  // unwinding a stack at the end: never block
    mu.owner = current_;
    return;
  }
  if (current_ == nullptr) {
    if (mu.owner != nullptr || mu.owned_by_scheduler) {
      Fail("the scheduler context tried to take mutex #" + std::to_string(mu.id) + " which is held by '" +
           (mu.owner ? mu.owner->name : scheduler_name_) + "' (it cannot block)");
    }
    mu.owned_by_scheduler = true;
    return;
  }
  SimThread* self = current_;
  if (options_.preempt_on_lock) Yield();
  while (mu.owner != nullptr || mu.owned_by_scheduler) {
    if (mu.owner == self) Fail("thread '" + self->name + "' locked mutex #" + std::to_string(mu.id) + " twice");
    mu.waiters.push_back(self);
    self->wait_mutex = &mu;
    Block(self, "mutex", mu.id, std::nullopt);
  }
  mu.owner = self;
}

void SimRuntime::MutexUnlock(SimMutex& mu) {
  if (tearing_down_) {
    mu.owner = nullptr;
    mu.owned_by_scheduler = false;
    return;
  }
  if (current_ == nullptr) {
    if (!mu.owned_by_scheduler) Fail("the scheduler context unlocked mutex #" + std::to_string(mu.id) + " it does not hold");
    mu.owned_by_scheduler = false;
  } else {
    if (mu.owner != current_) {
      Fail("thread '" + current_->name + "' unlocked mutex #" + std::to_string(mu.id) + " held by '" +
           (mu.owner ? mu.owner->name : std::string("nobody")) + "'");
    }
    mu.owner = nullptr;
  }
  if (!mu.waiters.empty()) {
    // The first waiter retries; others may barge in first, as with a real mutex.
    SimThread* next = mu.waiters.front();
    mu.waiters.erase(mu.waiters.begin());
    MakeRunnable(next);
  }
}

bool SimRuntime::CondWait(SimCondVar& cv, SimMutex& mu, std::optional<MonoTime> deadline) {
  if (tearing_down_) return false;
  SimThread* self = Self("CondVar::Wait");
  if (mu.owner != self) Fail("thread '" + self->name + "' waits on condvar #" + std::to_string(cv.id) + " without holding its mutex");
  std::optional<TrueNs> wake;
  if (deadline) {
    wake = self->node < 0 ? std::max<TrueNs>(now_, deadline->time_since_epoch().count())
                          : nodes_[static_cast<size_t>(self->node)]->clock.TrueWhenMonoReaches(*deadline, now_);
    if (*wake <= now_) {
      // Already past: no wait, but still a scheduling point (the mutex is released meanwhile).
      MutexUnlock(mu);
      MutexLock(mu);
      return false;
    }
  }
  MutexUnlock(mu);
  cv.waiters.push_back(self);
  self->wait_cv = &cv;
  self->wait_deadline_local = deadline;
  Block(self, "condvar", cv.id, wake);
  const bool notified = !self->timed_out;
  MutexLock(mu);
  return notified;
}

void SimRuntime::CondNotify(SimCondVar& cv, bool all) {
  if (tearing_down_) return;
  while (!cv.waiters.empty()) {
    SimThread* waiter = cv.waiters.front();
    cv.waiters.erase(cv.waiters.begin());
    waiter->timed_out = false;
    MakeRunnable(waiter);
    if (!all) break;
  }
}

void SimRuntime::JoinThread(SimThread& thread) {
  if (tearing_down_) return;
  if (current_ == &thread) Fail("thread '" + thread.name + "' joins itself");
  if (thread.state == SimThread::State::kDone) return;
  if (current_ != nullptr) {
    thread.joiners.push_back(current_);
    Block(current_, "join", thread.id, std::nullopt);
    return;
  }
  // The driver joins by running the simulation until the thread is done. A thread that can
  // never finish (crashed node, deadlock) is left to the destructor's unwinding instead: a
  // Thread handle joins in its destructor, where throwing would terminate the process.
  if (in_scheduler_loop_) Fail("a scheduled event tried to join thread '" + thread.name + "' (it cannot block)");
  // Runs until that thread exits (other threads may go on for ever: the joined one need not be
  // the last).
  driver_join_ = &thread;
  struct Clear {
    SimThread*& join;
    ~Clear() { join = nullptr; }
  } clear{driver_join_};
  const TrueNs limit = options_.driver_join_budget_ns > 0 ? now_ + options_.driver_join_budget_ns
                                                          : std::numeric_limits<TrueNs>::max();
  while (thread.state != SimThread::State::kDone && !thread.crashed) {
    const StopReason reason = RunUntil(limit);
    if (reason == StopReason::kDeadlock || reason == StopReason::kAllDone || reason == StopReason::kTimeReached) {
      if (thread.state != SimThread::State::kDone) {
        spdlog::error("simulator: joining thread '{}' that can never finish:\n{}", thread.name, ThreadReport());
      }
      return;
    }
  }
}

std::string SimRuntime::ThreadName(int node, uint64_t thread) const {
  std::string out = node >= 0 && node < node_count() ? nodes_[static_cast<size_t>(node)]->name : "-";
  out.push_back('/');
  out += thread >= 1 && thread <= threads_.size() ? threads_[thread - 1]->name : "-";
  return out;
}

std::string SimRuntime::ThreadReport() const {
  std::ostringstream out;
  for (const auto& thread : threads_) {
    if (thread->state == SimThread::State::kDone) continue;
    out << "  thread #" << thread->id << " '" << thread->name << "' on "
        << (thread->node >= 0 ? nodes_[static_cast<size_t>(thread->node)]->name : std::string("-"));
    if (thread->crashed) out << " (crashed node)";
    switch (thread->state) {
      case SimThread::State::kRunnable:
        out << (thread->parked ? ": runnable but its node is paused" : ": runnable");
        break;
      case SimThread::State::kRunning:
        out << ": running";
        break;
      case SimThread::State::kBlocked: {
        const std::string_view what = thread->wait_what;
        out << ": waiting on " << what;
        if (what == "mutex") {
          out << " #" << thread->wait_object;
          if (thread->wait_mutex != nullptr) {
            out << " held by "
                << (thread->wait_mutex->owner ? "'" + thread->wait_mutex->owner->name + "'"
                                              : std::string(thread->wait_mutex->owned_by_scheduler ? "the scheduler" : "nobody"));
          }
        } else if (what == "condvar") {
          out << " #" << thread->wait_object;
        } else if (what == "join") {
          out << " of thread #" << thread->wait_object << " '" << threads_[thread->wait_object - 1]->name << "'";
        }
        if (thread->wait_deadline_local || thread->wait_deadline_true) out << " (with a deadline)";
        break;
      }
      case SimThread::State::kDone:
        break;
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace kvchaos::sim
