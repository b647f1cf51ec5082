#include "core/common/assert.h"

#include <gtest/gtest.h>

#include <string>

namespace kvchaos {
namespace {

TEST(AssertDeathTest, AFalseConditionAbortsNamingFileLineConditionAndMessage) {
  const int queued = 3;
  EXPECT_DEATH(KVCHAOS_ASSERT(queued < 2, "queue holds " + std::to_string(queued) + " attempts, max 2"),
               "assertion failed at .*assert_test.cc:[0-9]+: queued < 2: queue holds 3 attempts, max 2");
}

TEST(AssertTest, ATrueConditionNeverBuildsTheMessage) {
  int built = 0;
  auto message = [&built] {
    ++built;
    return std::string("never");
  };
  for (int i = 0; i < 1000; ++i) KVCHAOS_ASSERT(i >= 0, message());
  EXPECT_EQ(built, 0) << "the message expression ran on the success path";
}

}  // namespace
}  // namespace kvchaos
