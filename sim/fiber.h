// Fiber: one simulated thread's user-space context, on Boost.Context. The simulator switches
// between the scheduler and fibers only (never fiber to fiber), so a hand-off costs two context
// switches of a few nanoseconds each instead of the microseconds an OS-thread hand-off costs.
// ASan and TSan are told about every switch (their fiber APIs), so sanitizer builds stay clean.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>

namespace kvchaos::sim {

class Fiber {
 public:
  // `fn` runs on its own stack of `stack_bytes` the first time Resume() is called.
  Fiber(std::function<void()> fn, size_t stack_bytes);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // From the scheduler: runs the fiber until it calls Suspend() or its function returns.
  // An exception that escaped the function is rethrown here.
  void Resume();
  // From inside this fiber: back to the scheduler that resumed it.
  void Suspend();
  bool finished() const { return finished_; }

 private:
  void Start();

  struct State;
  std::unique_ptr<State> state_;
  std::function<void()> fn_;
  size_t stack_bytes_;
  bool started_ = false;
  bool finished_ = false;
  std::exception_ptr error_;
};

}  // namespace kvchaos::sim
