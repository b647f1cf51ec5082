#include "core/common/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <mutex>

#include "core/common/repeat_limit_sink.h"
#include "core/common/thread_util.h"

namespace kvchaos {
namespace {

// %N in the pattern: the name of the thread that logs.
class ThreadNameFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string& name = CurrentThreadName();
    dest.append(name.data(), name.data() + name.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<ThreadNameFlag>(); }
};

}  // namespace

Status SetLogLevel(std::string_view level) {
  const auto parsed = spdlog::level::from_str(std::string(level));
  // from_str answers "off" for anything it does not know; only accept "off" when asked for.
  if (parsed == spdlog::level::off && level != "off") {
    return Status::InvalidArgument("log level '" + std::string(level) +
                                   "' is not one of trace, debug, info, warn, error, critical, off");
  }
  spdlog::set_level(parsed);
  return Status::Ok();
}

void InitLogging() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A message repeated every loop passes once per 5 s, counted (repeat_limit_sink.h).
    auto sink = std::make_shared<RepeatLimitSink>(std::chrono::seconds(5));
    sink->add_sink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    auto logger = std::make_shared<spdlog::logger>("kvchaos", sink);
    spdlog::register_logger(logger);
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<ThreadNameFlag>('N').set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%N] %v");
    logger->set_formatter(std::move(formatter));
    spdlog::set_default_logger(logger);
  });
  const char* env = std::getenv("KVCHAOS_LOG");
  if (env == nullptr || *env == '\0') {
    spdlog::set_level(spdlog::level::info);
  } else if (Status s = SetLogLevel(env); !s.ok()) {
    spdlog::set_level(spdlog::level::info);
    spdlog::warn("KVCHAOS_LOG: {}; using info", s.message());
  }
}

}  // namespace kvchaos
