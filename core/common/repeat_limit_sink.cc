// RepeatLimitSink (see repeat_limit_sink.h).
#include "core/common/repeat_limit_sink.h"

#include <algorithm>

namespace kvchaos {

void RepeatLimitSink::sink_it_(const spdlog::details::log_msg& msg) {
  std::string key(1, static_cast<char>('0' + static_cast<int>(msg.level)));
  key.append(msg.payload.data(), msg.payload.size());
  auto it = seen_.find(key);
  if (it != seen_.end() && msg.time - it->second.passed < window_) {
    ++it->second.held;
    return;
  }
  if (it == seen_.end()) {
    if (seen_.size() >= kMaxTracked) {
      auto oldest = std::min_element(seen_.begin(), seen_.end(),
                                     [](const auto& a, const auto& b) { return a.second.passed < b.second.passed; });
      seen_.erase(oldest);
    }
    seen_.emplace(std::move(key), Seen{msg.time, 0});
    dist_sink::sink_it_(msg);
    return;
  }
  const uint64_t held = it->second.held;
  const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(msg.time - it->second.passed);
  it->second = Seen{msg.time, 0};
  if (held == 0) {
    dist_sink::sink_it_(msg);
    return;
  }
  std::string text(msg.payload.data(), msg.payload.size());
  text += " (and " + std::to_string(held) + " more like it in the last " + std::to_string((since.count() + 500) / 1000) +
          " s)";
  spdlog::details::log_msg counted = msg;
  counted.payload = spdlog::string_view_t(text.data(), text.size());
  dist_sink::sink_it_(counted);
}

}  // namespace kvchaos
