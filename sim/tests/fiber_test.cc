// Fiber: control passes back and forth in order, exceptions surface in the scheduler, and a
// fiber destroyed before finishing has its stack unwound (destructors run).
#include "sim/fiber.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace kvchaos::sim {
namespace {

TEST(FiberTest, ResumeAndSuspendAlternateInOrder) {
  std::vector<std::string> log;
  Fiber* self = nullptr;
  Fiber fiber(
      [&] {
        log.push_back("f1");
        self->Suspend();
        log.push_back("f2");
      },
      64 * 1024);
  self = &fiber;
  log.push_back("s1");
  fiber.Resume();
  log.push_back("s2");
  EXPECT_FALSE(fiber.finished()) << "the fiber suspended, it must not count as finished";
  fiber.Resume();
  EXPECT_TRUE(fiber.finished()) << "the fiber's function returned";
  EXPECT_EQ(log, (std::vector<std::string>{"s1", "f1", "s2", "f2"}));
}

TEST(FiberTest, ExceptionInsideFiberIsRethrownByResume) {
  Fiber fiber([] { throw std::runtime_error("boom inside"); }, 64 * 1024);
  try {
    fiber.Resume();
    FAIL() << "the fiber's exception was swallowed";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom inside");
  }
  EXPECT_TRUE(fiber.finished());
}

TEST(FiberTest, DestroyingSuspendedFiberRunsItsDestructors) {
  int destroyed = 0;
  struct Guard {
    int* counter;
    ~Guard() { ++*counter; }
  };
  {
    Fiber* self = nullptr;
    auto fiber = std::make_unique<Fiber>(
        [&] {
          Guard guard{&destroyed};
          self->Suspend();
          ADD_FAILURE() << "a destroyed fiber must never continue";
        },
        64 * 1024);
    self = fiber.get();
    fiber->Resume();
    EXPECT_EQ(destroyed, 0);
  }
  EXPECT_EQ(destroyed, 1) << "the suspended fiber's stack was not unwound";
}

TEST(FiberTest, NeverStartedFiberIsDestroyedCleanly) {
  bool ran = false;
  { Fiber fiber([&] { ran = true; }, 64 * 1024); }
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace kvchaos::sim
