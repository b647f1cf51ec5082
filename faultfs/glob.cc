// Backtracking glob matcher; patterns are short, so the worst case stays small.
#include "faultfs/glob.h"

namespace kvchaos::faultfs {

bool GlobMatch(std::string_view p, std::string_view s) {
  size_t pi = 0;
  size_t si = 0;
  while (pi < p.size()) {
    if (p[pi] == '*') {
      const bool deep = pi + 1 < p.size() && p[pi + 1] == '*';
      size_t next = pi + (deep ? 2 : 1);
      // "**/" may also match nothing, slash included.
      if (deep && next < p.size() && p[next] == '/' && GlobMatch(p.substr(next + 1), s.substr(si))) return true;
      for (size_t k = si;; ++k) {
        if (GlobMatch(p.substr(next), s.substr(k))) return true;
        if (k >= s.size() || (!deep && s[k] == '/')) return false;
      }
    }
    if (si >= s.size()) return false;
    if (p[pi] == '?') {
      if (s[si] == '/') return false;
    } else if (p[pi] != s[si]) {
      return false;
    }
    ++pi;
    ++si;
  }
  return si == s.size();
}

}  // namespace kvchaos::faultfs
