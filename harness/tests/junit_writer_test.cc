// JUnit XML for CI: suites per scenario, a case per seed, failures carrying the failed checks and
// the repro command, and text escaped so any message stays well-formed XML.
#include "harness/junit_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/tests/result_fixtures.h"

namespace kvchaos::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(JUnitWriter, OneSuitePerScenarioOneCasePerRun) {
  RunResult second = testing::PassingRun();
  second.seed = 43;
  const std::string xml = JUnitXml({testing::PassingRun(), testing::FailingRun(), second});
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"kvchaos\" tests=\"3\" failures=\"1\" errors=\"0\""));
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"leader-crash\" tests=\"2\" failures=\"0\""));
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"redis-outage-long\" tests=\"1\" failures=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"leader-crash\" name=\"sim seed=43\""));
  EXPECT_LT(xml.find("name=\"leader-crash\""), xml.find("name=\"redis-outage-long\"")) << "first-seen order";
}

TEST(JUnitWriter, AFailureListsTheFailedChecksAndTheReproCommand) {
  const std::string xml = JUnitXml({testing::FailingRun()});
  EXPECT_THAT(xml, HasSubstr("<failure message=\"violated: no_stale_writes, no_dual_acting\">"));
  EXPECT_THAT(xml, HasSubstr("FAILED no_stale_writes: stale writes accepted: 2 (rejected: 0)"));
  EXPECT_THAT(xml, HasSubstr("reproduce: kvchaos run &apos;scenarios/ci/redis outage long.yaml&apos; --seed 7"));
  EXPECT_THAT(xml, Not(HasSubstr("FAILED failover_p99_ms"))) << "passed checks are not failures";
}

TEST(JUnitWriter, ARunThatCouldNotCompleteIsAnError) {
  RunResult r = testing::PassingRun();
  r.error = "redis-server exited: <port in use> & \x01gone";
  const std::string xml = JUnitXml({r});
  EXPECT_THAT(xml, HasSubstr("errors=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<error message=\"redis-server exited: &lt;port in use&gt; &amp; gone\">"));
}

TEST(JUnitWriter, EscapesEveryXmlSpecialCharacter) {
  EXPECT_EQ(XmlEscape("a<b>&\"c'\x02"), "a&lt;b&gt;&amp;&quot;c&apos;");
}

}  // namespace
}  // namespace kvchaos::harness
