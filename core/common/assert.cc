// The failure path of KVCHAOS_ASSERT (see assert.h).
#include "core/common/assert.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include <spdlog/spdlog.h>

namespace kvchaos {

void AssertionFailed(const char* condition, std::string_view message, const char* file, int line) {
  const std::string text = "assertion failed at " + std::string(file) + ":" + std::to_string(line) + ": " + condition +
                           ": " + std::string(message);
  // Through the process logger (InitLogging) when it is set up, else one plain write to stderr.
  if (spdlog::logger* logger = spdlog::default_logger_raw(); logger != nullptr && logger->name() == "kvchaos") {
    logger->critical("{}", text);
    logger->flush();
  } else {
    const std::string out = "kvchaos: " + text + "\n";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, out.data(), out.size());
  }
  std::abort();
}

}  // namespace kvchaos
