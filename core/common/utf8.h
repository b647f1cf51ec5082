// UTF-8 checks for input boundaries. JSON text must be UTF-8, and nlohmann::json throws from
// dump() on any string that is not, so every input that may reach JSON output (config and
// scenario files, control commands, meta keys) is checked where it enters, and its errors name
// the offending byte without echoing it.
#pragma once

#include <string>
#include <string_view>

namespace kvchaos {

// Offset of the first byte that does not start a well-formed UTF-8 sequence (overlong forms,
// surrogates and code points past U+10FFFF are not well formed), or npos when `s` is valid.
size_t Utf8ErrorOffset(std::string_view s);
inline bool IsValidUtf8(std::string_view s) { return Utf8ErrorOffset(s) == std::string_view::npos; }

// "" when `s` is valid UTF-8, else "is not valid UTF-8 (byte 0xFF at offset 3)".
std::string Utf8Problem(std::string_view s);

// `s` with every byte that is not part of a well-formed sequence written as "\xFF", so a message
// can quote input without carrying the invalid bytes on.
std::string EscapeInvalidUtf8(std::string_view s);

}  // namespace kvchaos
