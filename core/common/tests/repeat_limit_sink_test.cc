// RepeatLimitSink: a message repeated within the window passes once; the next pass after the
// window says how many were held back; other messages and levels pass meanwhile.
#include "core/common/repeat_limit_sink.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

namespace kvchaos {
namespace {

class RepeatLimitSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto out = std::make_shared<spdlog::sinks::ostream_sink_st>(text_);
    out->set_pattern("%l %v");
    sink_.add_sink(out);
  }
  void Log(spdlog::level::level_enum level, const std::string& text, int64_t at_ms) {
    spdlog::details::log_msg msg("test", level, text);
    msg.time = spdlog::log_clock::time_point(std::chrono::milliseconds(1'000'000 + at_ms));
    sink_.log(msg);
  }
  std::ostringstream text_;
  RepeatLimitSink sink_{std::chrono::seconds(5)};
};

TEST_F(RepeatLimitSinkTest, ARepeatedWarningPassesOncePerWindowAndIsCounted) {
  // A warning every 100 ms for 12 s, as an elector loop logs while its backend is down.
  for (int i = 0; i < 120; ++i) Log(spdlog::level::warn, "cannot read the lock holder", i * 100);
  EXPECT_EQ(text_.str(),
            "warning cannot read the lock holder\n"
            "warning cannot read the lock holder (and 49 more like it in the last 5 s)\n"
            "warning cannot read the lock holder (and 49 more like it in the last 5 s)\n")
      << "120 warnings over 12 s: 3 lines, the later ones counting what they stand for";
}

TEST_F(RepeatLimitSinkTest, OtherMessagesAndLevelsPassMeanwhile) {
  Log(spdlog::level::warn, "backend down", 0);
  Log(spdlog::level::warn, "backend down", 10);
  Log(spdlog::level::info, "backend down", 20);
  Log(spdlog::level::warn, "heartbeat failed", 30);
  Log(spdlog::level::warn, "backend down", 6000);
  EXPECT_EQ(text_.str(),
            "warning backend down\n"
            "info backend down\n"
            "warning heartbeat failed\n"
            "warning backend down (and 1 more like it in the last 6 s)\n");
}

TEST_F(RepeatLimitSinkTest, RemembersABoundedNumberOfMessages) {
  for (size_t i = 0; i < RepeatLimitSink::kMaxTracked + 10; ++i) Log(spdlog::level::warn, "m" + std::to_string(i), 0);
  // The first ones were forgotten to stay within the bound, so they pass again at once.
  Log(spdlog::level::warn, "m0", 1);
  const std::string all = text_.str();
  EXPECT_NE(all.rfind("warning m0\n"), all.find("warning m0\n")) << "m0 should have passed twice";
}

}  // namespace
}  // namespace kvchaos
