// UTF-8 validation; see utf8.h.
#include "core/common/utf8.h"

#include <cstdint>
#include <cstdio>

namespace kvchaos {
namespace {

// Length of the well-formed sequence starting at s[i], or 0 when there is none.
size_t SequenceLength(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t len = 0;
  uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return len;
}

std::string HexByte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%02X", c);
  return buf;
}

}  // namespace

size_t Utf8ErrorOffset(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = SequenceLength(s, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string Utf8Problem(std::string_view s) {
  const size_t bad = Utf8ErrorOffset(s);
  if (bad == std::string_view::npos) return "";
  return "is not valid UTF-8 (byte 0x" + HexByte(static_cast<unsigned char>(s[bad])) + " at offset " +
         std::to_string(bad) + ")";
}

std::string EscapeInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t len = SequenceLength(s, i);
    if (len == 0) {
      out += "\\x" + HexByte(static_cast<unsigned char>(s[i]));
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace kvchaos
