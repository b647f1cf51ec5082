// Path globs of faultfs rules, matched against the path inside the mount without a leading '/':
// `*` matches within one name, `**` matches across '/', `?` matches one character other than '/'.
// A pattern "**/x" also matches "x" at the top. Pure function, no allocation.
#pragma once

#include <string_view>

namespace kvchaos::faultfs {

bool GlobMatch(std::string_view pattern, std::string_view path);

}  // namespace kvchaos::faultfs
