// Every scenario file shipped under scenarios/ loads cleanly against the schema and the checks,
// follows the suite conventions (file name = scenario name, incidents documented, soak runs long,
// CI runs short), and together the suites cover the failure classes the project promises to test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include "harness/scenario_loader.h"

namespace kvchaos::harness {
namespace {

using namespace std::chrono_literals;

const std::string kScenarios = std::string(KVCHAOS_SOURCE_DIR) + "/scenarios";

std::vector<Scenario> LoadSuite(const std::string& suite) {
  Result<std::vector<std::string>> files = FindScenarioFiles(kScenarios + "/" + suite);
  EXPECT_TRUE(files.ok()) << files.status().ToString();
  std::vector<Scenario> loaded;
  if (!files.ok()) return loaded;
  for (const std::string& file : *files) {
    Result<Scenario> s = LoadScenarioFile(file);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (s.ok()) loaded.push_back(*s);
  }
  return loaded;
}

TEST(ScenarioFiles, EveryFileUnderScenariosValidates) {
  Result<std::vector<std::string>> files = FindScenarioFiles(kScenarios);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_GE(files->size(), 20u) << "the suites under " << kScenarios << " look empty";
  std::set<std::string> names;
  for (const std::string& file : *files) {
    Result<Scenario> s = LoadScenarioFile(file);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(std::filesystem::path(file).stem().string(), s->name) << file << ": name the file after the scenario";
    EXPECT_TRUE(names.insert(s->name).second) << file << ": scenario name '" << s->name << "' is used twice";
    EXPECT_FALSE(s->description.empty()) << file << ": say what the scenario exercises in `description`";
  }
}

TEST(ScenarioFiles, EveryIncidentDocumentsTheIncidentItReproduces) {
  const std::vector<Scenario> incidents = LoadSuite("incidents");
  ASSERT_FALSE(incidents.empty());
  for (const Scenario& s : incidents) {
    EXPECT_TRUE(s.incident.has_value()) << s.file << ": an incident file needs an `incident:` section";
  }
}

TEST(ScenarioFiles, CiRunsAreShortAndSoakRunsAreLong) {
  for (const Scenario& s : LoadSuite("ci")) {
    const Duration limit = s.mode == RunMode::kSim ? Duration(30min) : Duration(90s);
    EXPECT_LE(s.duration, limit) << s.file << ": too long for the CI suite (true time in real mode)";
  }
  for (const Scenario& s : LoadSuite("soak")) {
    EXPECT_GE(s.duration, Duration(30min)) << s.file << ": a soak run that short belongs in ci/";
  }
}

// The failure classes issue 8 lists; each must be exercised by at least one ci/ or incidents/ file.
TEST(ScenarioFiles, TheSuitesCoverEveryPromisedFailureClass) {
  std::vector<Scenario> all = LoadSuite("ci");
  for (Scenario& s : LoadSuite("incidents")) all.push_back(std::move(s));
  std::map<std::string, bool> covered{{"leader crash", false},
                                      {"leader pause longer than the lease", false},
                                      {"coordination outage shorter than the lease", false},
                                      {"coordination outage longer than the lease", false},
                                      {"leader partitioned from the coordination backend", false},
                                      {"clock drift", false},
                                      {"clock jump", false},
                                      {"graceful demote", false},
                                      {"rolling restart of all nodes", false},
                                      {"one backend returning EIO", false},
                                      {"one backend hanging", false},
                                      {"bit flips on reads of one backend", false},
                                      {"all backends failing then recovering", false},
                                      {"misdirected reads of one backend, inline headers on", false},
                                      {"swapped meta index entries, inline headers on", false}};
  for (const Scenario& s : all) {
    std::set<int> restarted;
    for (const FaultEvent& f : s.faults) {
      const bool leader = f.node.kind == NodeRef::Kind::kLeader;
      const Duration len = f.length.value_or(s.duration - f.at);
      if (f.action == FaultAction::kCrash && leader) covered["leader crash"] = true;
      if (f.action == FaultAction::kPause && leader && len > s.topology.lease) {
        covered["leader pause longer than the lease"] = true;
      }
      if (f.action == FaultAction::kCoordinationOutage) {
        covered[len < s.topology.lease ? "coordination outage shorter than the lease"
                                       : "coordination outage longer than the lease"] = true;
      }
      if (f.action == FaultAction::kPartition && leader && f.partition_from != PartitionFrom::kNodes) {
        covered["leader partitioned from the coordination backend"] = true;
      }
      if (f.action == FaultAction::kClockDrift) covered["clock drift"] = true;
      if (f.action == FaultAction::kClockJump) covered["clock jump"] = true;
      if (f.action == FaultAction::kDemote) covered["graceful demote"] = true;
      if ((f.action == FaultAction::kStop || f.action == FaultAction::kCrash) && f.length &&
          f.node.kind == NodeRef::Kind::kIndex) {
        restarted.insert(f.node.index);
      }
      if (f.action == FaultAction::kStoreFault) {
        const bool one = f.backend != "all";
        if (one && f.rule.errno_name == "EIO") covered["one backend returning EIO"] = true;
        if (one && f.rule.hang) covered["one backend hanging"] = true;
        if (one && f.rule.bit_flips > 0) covered["bit flips on reads of one backend"] = true;
        if (!one && f.rule.errno_value != 0 && f.length) covered["all backends failing then recovering"] = true;
        if (one && f.rule.misdirected_read && s.topology.inline_header && s.expect.min_misrouted_reads > 0) {
          covered["misdirected reads of one backend, inline headers on"] = true;
        }
      }
      if (f.action == FaultAction::kMetaSwap && s.topology.inline_header && s.expect.min_misrouted_reads > 0) {
        covered["swapped meta index entries, inline headers on"] = true;
      }
    }
    if (static_cast<int>(restarted.size()) == s.topology.nodes && s.topology.nodes > 1) {
      covered["rolling restart of all nodes"] = true;
    }
  }
  for (const auto& [what, yes] : covered) EXPECT_TRUE(yes) << "no ci/ or incidents/ scenario covers: " << what;
}

}  // namespace
}  // namespace kvchaos::harness
