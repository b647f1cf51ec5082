// Boost.Context fibers with sanitizer annotations. The fiber's function runs inside a try block
// so an exception (a failed simulator check, a test assertion) surfaces in the scheduler; the
// forced_unwind Boost throws to unwind a fiber destroyed before it finished is let through.
#include "sim/fiber.h"

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <utility>

#if defined(__SANITIZE_ADDRESS__)
#define KVCHAOS_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KVCHAOS_SIM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define KVCHAOS_SIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KVCHAOS_SIM_TSAN 1
#endif
#endif

#ifdef KVCHAOS_SIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef KVCHAOS_SIM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace kvchaos::sim {
namespace ctx = boost::context;

struct Fiber::State {
  ctx::fiber self;    // resumes the fiber; valid while it is suspended
  ctx::fiber caller;  // resumes the scheduler; valid while the fiber runs
  const void* stack_bottom = nullptr;
  size_t stack_size = 0;
  const void* caller_bottom = nullptr;
  size_t caller_size = 0;
  void* fake_stack = nullptr;
  void* tsan_fiber = nullptr;
  void* tsan_caller = nullptr;
};

namespace {

// Wraps the guarded stack allocator to learn where the stack lies (ASan needs its bounds).
class RecordingStack {
 public:
  RecordingStack(size_t bytes, const void** bottom, size_t* size) : inner_(bytes), bottom_(bottom), size_(size) {}
  ctx::stack_context allocate() {
    ctx::stack_context sc = inner_.allocate();
    *bottom_ = static_cast<char*>(sc.sp) - sc.size;
    *size_ = sc.size;
    return sc;
  }
  void deallocate(ctx::stack_context& sc) noexcept { inner_.deallocate(sc); }

 private:
  ctx::protected_fixedsize_stack inner_;
  const void** bottom_;
  size_t* size_;
};

inline void StartSwitch(void** fake_stack, const void* bottom, size_t size) {
#ifdef KVCHAOS_SIM_ASAN
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#else
  (void)fake_stack, (void)bottom, (void)size;
#endif
}

inline void FinishSwitch(void* fake_stack, const void** bottom_old, size_t* size_old) {
#ifdef KVCHAOS_SIM_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, bottom_old, size_old);
#else
  (void)fake_stack, (void)bottom_old, (void)size_old;
#endif
}

inline void TsanSwitch(void* to) {
#ifdef KVCHAOS_SIM_TSAN
  __tsan_switch_to_fiber(to, 0);
#else
  (void)to;
#endif
}

}  // namespace

Fiber::Fiber(std::function<void()> fn, size_t stack_bytes)
    : state_(std::make_unique<State>()), fn_(std::move(fn)), stack_bytes_(stack_bytes) {}

void Fiber::Start() {
  // Created on first resume, so a thread that never runs costs no stack.
  State* st = state_.get();
  started_ = true;
#ifdef KVCHAOS_SIM_TSAN
  st->tsan_fiber = __tsan_create_fiber(0);
#endif
  st->self = ctx::fiber(std::allocator_arg, RecordingStack(stack_bytes_, &st->stack_bottom, &st->stack_size),
                        [this, st](ctx::fiber&& caller) {
                          st->caller = std::move(caller);
                          FinishSwitch(nullptr, &st->caller_bottom, &st->caller_size);
                          try {
                            fn_();
                          } catch (const ctx::detail::forced_unwind&) {
                            // Destroyed before finishing: Boost jumps back to the destroyer
                            // (the scheduler's stack) once the unwinding is done.
                            StartSwitch(nullptr, st->caller_bottom, st->caller_size);
                            TsanSwitch(st->tsan_caller);
                            throw;
                          } catch (...) {
                            error_ = std::current_exception();
                          }
                          fn_ = nullptr;  // destroy captured state while still on this stack
                          finished_ = true;
                          StartSwitch(nullptr, st->caller_bottom, st->caller_size);
                          TsanSwitch(st->tsan_caller);
                          return std::move(st->caller);
                        });
}

Fiber::~Fiber() {
  State* st = state_.get();
  if (st->self) {
    // Destroying a suspended fiber unwinds its stack (Boost throws forced_unwind inside it).
    void* fake = nullptr;
    StartSwitch(&fake, st->stack_bottom, st->stack_size);
#ifdef KVCHAOS_SIM_TSAN
    st->tsan_caller = __tsan_get_current_fiber();
#endif
    TsanSwitch(st->tsan_fiber);
    st->self = ctx::fiber();
    FinishSwitch(fake, nullptr, nullptr);
  }
#ifdef KVCHAOS_SIM_TSAN
  if (st->tsan_fiber) __tsan_destroy_fiber(st->tsan_fiber);
#endif
}

void Fiber::Resume() {
  if (!started_) Start();
  State* st = state_.get();
  void* fake = nullptr;
  StartSwitch(&fake, st->stack_bottom, st->stack_size);
#ifdef KVCHAOS_SIM_TSAN
  st->tsan_caller = __tsan_get_current_fiber();
#endif
  TsanSwitch(st->tsan_fiber);
  st->self = std::move(st->self).resume();
  FinishSwitch(fake, nullptr, nullptr);
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void Fiber::Suspend() {
  State* st = state_.get();
  StartSwitch(&st->fake_stack, st->caller_bottom, st->caller_size);
  TsanSwitch(st->tsan_caller);
  try {
    st->caller = std::move(st->caller).resume();
  } catch (const ctx::detail::forced_unwind&) {
    FinishSwitch(st->fake_stack, nullptr, nullptr);
    throw;
  }
  FinishSwitch(st->fake_stack, &st->caller_bottom, &st->caller_size);
}

}  // namespace kvchaos::sim
