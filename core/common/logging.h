// Logging on spdlog: one process-wide logger on stderr, each line stamped with the thread's name;
// a message repeated within 5 s passes once and is counted (repeat_limit_sink.h).
// The level comes from the environment variable KVCHAOS_LOG (trace, debug, info, warn, error,
// off; default info). Code logs with spdlog::info(...) etc. after InitLogging().
#pragma once

#include <string_view>

#include "core/common/status.h"

namespace kvchaos {

// Sets up the default logger from KVCHAOS_LOG. Safe to call more than once.
void InitLogging();
// Sets the level by name; InvalidArgument names the bad level and lists the valid ones.
Status SetLogLevel(std::string_view level);

}  // namespace kvchaos
