// RepeatLimitSink: an spdlog sink that lets a message through once per window and counts its
// repeats, so a condition that fails every loop (a node whose Redis is unreachable warns ~10 times
// a second) costs one line per window instead of flooding the log. The next time the message
// passes it says how many times it was held back: "... (and 49 more like it in the last 5 s)".
// Messages are the same when level and text are; times are the messages' own stamps (no clock of
// its own). At most kMaxTracked distinct messages are remembered (the oldest is forgotten first),
// so its memory is bounded whatever is logged. InitLogging puts it in front of stderr.
#pragma once

#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/dist_sink.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace kvchaos {

class RepeatLimitSink final : public spdlog::sinks::dist_sink<std::mutex> {
 public:
  static constexpr size_t kMaxTracked = 256;
  explicit RepeatLimitSink(std::chrono::milliseconds window) : window_(window) {}

 private:
  struct Seen {
    spdlog::log_clock::time_point passed;  // when it last went through
    uint64_t held = 0;                     // repeats held back since
  };
  void sink_it_(const spdlog::details::log_msg& msg) override;

  const std::chrono::milliseconds window_;
  std::map<std::string, Seen> seen_;  // key: level and text
};

}  // namespace kvchaos
