// The result file format: a round trip keeps every field; reading is strict about missing,
// ill-typed, unknown and contradictory fields and names the one at fault; writes are atomic.
#include "harness/run_result.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/tests/result_fixtures.h"

namespace kvchaos::harness {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

RunResult WithHistory() {
  RunResult r = testing::PassingRun();
  r.history = HistoryResult{1200, 300, "not linearizable", 1, 0, 0, 1, 0, 12.5,
                            "key 'k3.v1' is not linearizable: ...", "k3.v1",
                            {"t=1.000ms..2.000ms client=kvc_load0 finish_write k3.v1 (ok)",
                             "t=5.000ms..6.000ms client=kvc_load0 get_location k3.v1 -> none (ok)"},
                            {{"kvc_load0", "finish_write", "k3.v1", "ok", 1.0, 2.0, "crc=00000000000000ff", "", 2},
                             {"kvc_load0", "get_location", "k3.v1", "ok", 5.0, 6.0, "none", "n1", 1}},
                            "leader-crash-42.history.jsonl"};
  r.verdicts.push_back({"linearizable", false, "not linearizable: 1200 ops over 300 keys"});
  return r;
}

TEST(RunResult, JsonRoundTripKeepsEveryField) {
  for (const RunResult& r : {testing::PassingRun(), testing::FailingRun(), WithHistory()}) {
    const json j = ToJson(r);
    EXPECT_EQ(j["format"], "kvchaos-result/1");
    EXPECT_EQ(j["passed"], r.passed());
    EXPECT_EQ(j["repro"], r.ReproCommand());
    EXPECT_EQ(j["failovers"][0]["failover_ms"], 2101.5);
    Result<RunResult> back = RunResultFromJson(json::parse(j.dump()), "mem");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, r);
  }
}

// How to reproduce a run travels with it: a real run says --mode real and carries the flags that
// changed it (--faultfs), and the program is the kvchaos the runner was started as.
TEST(RunResult, ReproCommandCarriesTheProgramModeAndRunFlags) {
  RunResult r = testing::FailingRun();
  r.mode = "real";
  r.program = "/opt/kvchaos build/kvchaos";
  r.run_flags = {"--faultfs", "/opt/kvchaos/bin/faultfs"};
  r.interrupted = true;
  EXPECT_EQ(r.ReproCommand(), "'/opt/kvchaos build/kvchaos' run 'scenarios/ci/redis outage long.yaml' --seed 7 "
                              "--mode real --faultfs /opt/kvchaos/bin/faultfs");
  Result<RunResult> back = RunResultFromJson(json::parse(ToJson(r).dump()), "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r) << "program, run_flags and interrupted survive the file";
  EXPECT_EQ(back->ReproCommand(), r.ReproCommand());
  // Results written before these fields existed read as a plain `kvchaos run`.
  json old = ToJson(testing::FailingRun());
  old.erase("program");
  old.erase("run_flags");
  old.erase("interrupted");
  Result<RunResult> read_old = RunResultFromJson(old, "old.json");
  ASSERT_TRUE(read_old.ok()) << read_old.status().ToString();
  EXPECT_EQ(read_old->ReproCommand(), "kvchaos run 'scenarios/ci/redis outage long.yaml' --seed 7");
}

// The data plane a real run measured survives the file; a bad status code name is refused.
TEST(RunResult, DataPlaneRoundTripsAndIsReadStrictly) {
  RunResult r = testing::PassingRun();
  r.mode = "real";
  r.data_plane = DataPlane{{{"IoError", 7}, {"NotLeader", 2}}, 3};
  const json j = ToJson(r);
  EXPECT_EQ(j["data_plane"]["errors_by_code"]["IoError"], 7);
  Result<RunResult> back = RunResultFromJson(json::parse(j.dump()), "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
  EXPECT_TRUE(ToJson(testing::PassingRun())["data_plane"].is_null()) << "no data plane measured: null, not zeros";
  json bad = j;
  bad["data_plane"]["errors_by_code"]["Oops"] = 1;
  Result<RunResult> refused = RunResultFromJson(bad, "r.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("r.json: data_plane.errors_by_code.Oops: not a status code name"));
}

// The history check's summary survives the file; a verdict the checker never gives is refused.
TEST(RunResult, HistoryRoundTripsAndIsReadStrictly) {
  const RunResult r = WithHistory();
  EXPECT_EQ(r.HistoryFileName(), "leader-crash-42.history.jsonl");
  const json j = ToJson(r);
  EXPECT_EQ(j["history"]["verdict"], "not linearizable");
  Result<RunResult> back = RunResultFromJson(json::parse(j.dump()), "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
  EXPECT_TRUE(ToJson(testing::PassingRun())["history"].is_null()) << "no history checked: null";
  json bad = j;
  bad["history"]["verdict"] = "fine";
  Result<RunResult> refused = RunResultFromJson(bad, "r.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("r.json: history.verdict: expected linearizable"));
  bad = j;
  bad["history"].erase("keys");
  EXPECT_THAT(RunResultFromJson(bad, "r.json").status().message(), HasSubstr("keys"));
}

TEST(RunResult, PassesOnlyWhenEveryVerdictPassesAndNoErrorOccurred) {
  RunResult r = testing::PassingRun();
  EXPECT_TRUE(r.passed());
  r.error = "redis-server did not start";
  EXPECT_FALSE(r.passed());
  EXPECT_FALSE(testing::FailingRun().passed());
}

TEST(RunResult, RunsOfAFileForBothModesNameTheirMode) {
  RunResult r = testing::PassingRun();
  r.both_modes = true;
  EXPECT_EQ(r.FileName(), "leader-crash-sim-42.json") << "the sim and real results of one seed must not overwrite each other";
  EXPECT_EQ(r.ReproCommand(), "kvchaos run scenarios/ci/leader-crash.yaml --seed 42 --mode sim");
  Result<RunResult> back = RunResultFromJson(ToJson(r), "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->both_modes);
  EXPECT_EQ(testing::PassingRun().FileName(), "leader-crash-42.json");
}

TEST(RunResult, ReproCommandQuotesPathsForTheShell) {
  EXPECT_EQ(testing::PassingRun().ReproCommand(), "kvchaos run scenarios/ci/leader-crash.yaml --seed 42");
  EXPECT_EQ(testing::FailingRun().ReproCommand(), "kvchaos run 'scenarios/ci/redis outage long.yaml' --seed 7");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
}

TEST(RunResult, ReadingNamesTheMissingOrIllTypedField) {
  const json good = ToJson(testing::PassingRun());
  auto error_of = [](const json& j) {
    Result<RunResult> r = RunResultFromJson(j, "r.json");
    return r.ok() ? std::string() : r.status().message();
  };
  json j = good;
  j.erase("seed");
  EXPECT_EQ(error_of(j), "r.json: seed: missing");
  j = good;
  j["failovers"][0]["serving_ms"] = "soon";
  EXPECT_EQ(error_of(j), "r.json: failovers[0].serving_ms: expected a number, got \"soon\"");
  j = good;
  j["failovers"][0]["serving_ms"] = 1.0;
  EXPECT_THAT(error_of(j), HasSubstr("failovers[0].serving_ms: is before fault_at_ms"));
  j = good;
  j["counters"]["bogons"] = 1;
  EXPECT_EQ(error_of(j), "r.json: counters.bogons: unknown counter");
  j = good;
  j["counters"]["saves"] = -1;
  EXPECT_EQ(error_of(j), "r.json: counters.saves: a counter cannot be negative");
  j = good;
  j["format"] = "kvchaos-result/99";
  EXPECT_THAT(error_of(j), HasSubstr("r.json: format: 'kvchaos-result/99' is not a format this build reads"));
  j = good;
  j["passed"] = false;
  EXPECT_THAT(error_of(j), HasSubstr("r.json: passed: says false but the verdicts"));
  j = good;
  j["counters"].erase("trace_events");
  EXPECT_EQ(error_of(j), "") << "a counter an older build did not write reads as 0";
}

TEST(RunResult, WritesAtomicallyAndReadsBack) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kvchaos_run_result_test_" + std::to_string(::getpid()));
  struct RemoveOnExit {
    std::filesystem::path path;
    ~RemoveOnExit() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } cleanup{dir};
  std::filesystem::create_directories(dir);
  const RunResult r = testing::FailingRun();
  const std::string path = (dir / r.FileName()).string();
  EXPECT_EQ(r.FileName(), "redis-outage-long-7.json");
  ASSERT_TRUE(WriteRunResult(r, path).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  Result<RunResult> back = ReadRunResult(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
  std::ofstream(path) << "{\"format\": ";
  Result<RunResult> broken = ReadRunResult(path);
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr("not valid JSON"));
  EXPECT_THAT(ReadRunResult((dir / "none.json").string()).status().message(), HasSubstr("cannot read result"));
}

// harness/result.schema.json is the machine-readable form of RESULTS.md; what we write must match it.
TEST(RunResult, WrittenJsonMatchesThePublishedSchema) {
  std::ifstream in(std::string(KVCHAOS_SOURCE_DIR) + "/harness/result.schema.json");
  std::ostringstream text;
  text << in.rdbuf();
  const json schema_json = json::parse(text.str());
  valijson::Schema schema;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_json);
  parser.populateSchema(schema_adapter, schema);
  for (const RunResult& r : {testing::PassingRun(), testing::FailingRun(), WithHistory()}) {
    const json j = ToJson(r);
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter target(j);
    std::string errors;
    if (!validator.validate(schema, target, &results)) {
      valijson::ValidationResults::Error e;
      while (results.popError(e)) {
        for (const std::string& c : e.context) errors += c;
        errors += ": " + e.description + "\n";
      }
    }
    EXPECT_EQ(errors, "") << r.scenario_name;
  }
  json extra = ToJson(testing::PassingRun());
  extra["surprise"] = 1;
  valijson::Validator validator;
  valijson::adapters::NlohmannJsonAdapter target(extra);
  EXPECT_FALSE(validator.validate(schema, target, nullptr)) << "the schema must not accept unknown fields";
}

}  // namespace
}  // namespace kvchaos::harness
