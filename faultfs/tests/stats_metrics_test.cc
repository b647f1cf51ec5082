// `faultfs ctl SOCKET metrics`: the stats reply of a real engine (a rule, counted calls) in the
// Prometheus text format, accepted by `promtool check metrics` (Debian prometheus, ci/packages.txt).
#include "faultfs/stats_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "faultfs/control_commands.h"
#include "faultfs/ctl.h"

namespace kvchaos::faultfs {
namespace {

using ::testing::HasSubstr;

// promtool's verdict on `text`, with its output.
std::pair<int, std::string> Promtool(const std::string& text) {
  char path[] = "/tmp/faultfs_metrics_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {-1, "mkstemp failed"};
  FILE* f = fdopen(fd, "w");
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  const std::string command = std::string("promtool check metrics < ") + path + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  std::string out;
  char buf[512];
  while (p != nullptr && std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int rc = p == nullptr ? -1 : pclose(p);
  std::remove(path);
  return {rc, out};
}

TEST(StatsMetrics, AnEnginesStatsRenderAsPrometheusText) {
  RuleEngine engine(1, nullptr);
  ControlCommands commands(engine, [] { return nlohmann::json{{"files", nlohmann::json::array()}}; });
  ASSERT_TRUE(commands.Handle(R"({"cmd":"add","rule":{"id":"eio \"p1\"","action":"errno","errno":"EIO"}})")["ok"]);
  engine.CountOp(Op::kRead, 5, std::chrono::microseconds(1500));
  engine.CountOp(Op::kRead, 0, std::chrono::microseconds(500));
  Result<std::string> text = StatsToPrometheus(commands.Handle(R"({"cmd":"stats"})"));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_THAT(*text, HasSubstr("faultfs_rules_enabled 1\n"));
  EXPECT_THAT(*text, HasSubstr("faultfs_rule_hits_total{rule=\"eio \\\"p1\\\"\"} 0\n")) << "rule ids are escaped";
  EXPECT_THAT(*text, HasSubstr("faultfs_op_calls_total{op=\"read\"} 2\n"));
  EXPECT_THAT(*text, HasSubstr("faultfs_op_errors_total{op=\"read\"} 1\n"));
  EXPECT_THAT(*text, HasSubstr("faultfs_op_latency_max_seconds{op=\"read\"} 0.0015\n"));
  const auto [rc, out] = Promtool(*text);
  EXPECT_EQ(rc, 0) << "promtool check metrics (Debian package prometheus) refused:\n" << out << "\n" << *text;
}

TEST(StatsMetrics, AReplyThatIsNotStatsNamesTheField) {
  Result<std::string> text = StatsToPrometheus(nlohmann::json{{"ok", false}, {"error", "boom"}});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(text.status().message(), HasSubstr("field \"enabled\""));
}

TEST(StatsMetrics, CtlMetricsAsksForTheStats) {
  Result<std::string> request = BuildCtlRequest({"metrics"});
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(*request, R"({"cmd":"stats"})");
  EXPECT_FALSE(BuildCtlRequest({"metrics", "extra"}).ok());
}

}  // namespace
}  // namespace kvchaos::faultfs
