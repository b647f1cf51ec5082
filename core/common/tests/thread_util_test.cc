#include "core/common/thread_util.h"

#include <gtest/gtest.h>

#include "core/common/runtime.h"

namespace kvchaos {
namespace {

TEST(ThreadUtilTest, ParsesCpuLists) {
  auto cpus = ParseCpuList("0-2,5,3");
  ASSERT_TRUE(cpus.ok()) << cpus.status().ToString();
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 3, 5}));
  auto bad = ParseCpuList("0-x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad part '0-x'"), std::string::npos) << bad.status().ToString();
  EXPECT_FALSE(ParseCpuList("3-1").ok()) << "a descending range is an error";
  EXPECT_FALSE(ParseCpuList("").ok());
}

TEST(ThreadUtilTest, AffinityIsSetAndInheritedBySpawnedThreads) {
  Runtime& rt = Runtime::Real();
  std::vector<int> child_cpus;
  std::vector<int> parent_cpus;
  // Work on a thread of its own so the test runner's affinity stays untouched.
  Thread parent = rt.Spawn("kvc_test_aff", [&] {
    const std::vector<int> all = CurrentThreadAffinity();
    ASSERT_FALSE(all.empty());
    ASSERT_TRUE(SetCurrentThreadAffinity({all.back()}).ok());
    parent_cpus = CurrentThreadAffinity();
    Thread child = rt.Spawn("kvc_test_aff2", [&] { child_cpus = CurrentThreadAffinity(); });
    child.Join();
  });
  parent.Join();
  ASSERT_EQ(parent_cpus.size(), 1u);
  EXPECT_EQ(child_cpus, parent_cpus) << "threads started after pinning must inherit the pin";
  EXPECT_FALSE(SetCurrentThreadAffinity({}).ok());
  EXPECT_FALSE(SetCurrentThreadAffinity({-1}).ok());
}

TEST(ThreadUtilTest, NameIsCutTo15Characters) {
  Runtime& rt = Runtime::Real();
  std::string seen;
  Thread t = rt.Spawn("x", [&] {
    SetCurrentThreadName("ucm_health_pmon_extra");
    seen = CurrentThreadName();
  });
  t.Join();
  EXPECT_EQ(seen, "ucm_health_pmon");
}

}  // namespace
}  // namespace kvchaos
