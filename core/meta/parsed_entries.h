// ParsedEntries: cache entries parsed before, by index key, each with the exact text it was
// parsed from, so an entry read again unchanged is not parsed again (parsing the JSON was the
// largest cost of a GetCacheLocation).
//
// Only a cache of a pure function (text -> locations): a changed text is parsed afresh, so what
// the index holds is always what is answered. That makes it safe to share between the managers of
// successive terms on one node (MetaNode keeps one for its lifetime): a new term's first reads
// find what the previous term parsed or wrote, instead of parsing every entry once per term.
// Bounded: cleared when it reaches kMaxKeys keys.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/meta/cache_location.h"

namespace kvchaos::meta {

class ParsedEntries {
 public:
  static constexpr size_t kMaxKeys = 16384;

  // Sets *out to the entry of `index_key` when it was parsed from this very `text` before.
  bool Find(const std::string& index_key, const std::string& text, std::vector<CacheLocation>* out) const;
  void Keep(const std::string& index_key, const std::string& text, const std::vector<CacheLocation>& locations);
  size_t size() const;

 private:
  struct Entry {
    std::string text;
    std::vector<CacheLocation> locations;
  };
  // A leaf lock (a map lookup, never held across a call or a wait), like the metrics registry's:
  // the simulator sees no scheduling point in it, so traces are those of the code without it.
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // looked up by key only, never walked
};

}  // namespace kvchaos::meta
