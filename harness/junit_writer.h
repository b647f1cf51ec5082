// Run results as JUnit XML, the format CI systems (GitLab, Jenkins, GitHub test reporters) show:
// one <testsuite> per scenario, one <testcase> per run named by its seed. A failed expectation
// is a <failure> whose text lists each failed check and the command that reproduces the run;
// a run that could not complete is an <error>.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"
#include "harness/run_result.h"

namespace kvchaos::harness {

// Suites appear in order of first appearance of each scenario, cases in the order given.
std::string JUnitXml(const std::vector<RunResult>& results);
Status WriteJUnit(const std::vector<RunResult>& results, const std::string& path);

// Escapes &, <, >, " and ' and drops characters XML 1.0 cannot carry.
std::string XmlEscape(const std::string& text);

}  // namespace kvchaos::harness
