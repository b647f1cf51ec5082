// KVCHAOS_ASSERT(cond, message): an always-on check of an invariant or a precondition of
// production code. Release builds keep it (a broken invariant in a store or an elector must stop
// the process, not go on to lose or corrupt data): when `cond` is false it logs
// "assertion failed at file:line: cond: message" (spdlog critical and plain stderr, in case
// logging is not set up) and aborts, so a core dump or a sanitizer report shows the stack.
//
// Cheap on hot paths: the condition is one predicted-taken branch, and `message` (any expression
// convertible to std::string_view, e.g. a std::string built with +) is evaluated only on failure.
// Check data in pairs (TigerBeetle's rule): where it is written and again where it is read back.
#pragma once

#include <string_view>

namespace kvchaos {

[[noreturn]] void AssertionFailed(const char* condition, std::string_view message, const char* file, int line);

}  // namespace kvchaos

#define KVCHAOS_ASSERT(cond, message)                                                \
  do {                                                                               \
    if (__builtin_expect(!(cond), 0)) {                                              \
      ::kvchaos::AssertionFailed(#cond, (message), __FILE__, __LINE__);              \
    }                                                                                \
  } while (0)
