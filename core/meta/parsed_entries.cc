// ParsedEntries: parsed cache entries by index key and text (see the header).
#include "core/meta/parsed_entries.h"

namespace kvchaos::meta {

bool ParsedEntries::Find(const std::string& index_key, const std::string& text,
                         std::vector<CacheLocation>* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(index_key);
  if (it == entries_.end() || it->second.text != text) return false;
  *out = it->second.locations;
  return true;
}

void ParsedEntries::Keep(const std::string& index_key, const std::string& text,
                         const std::vector<CacheLocation>& locations) {
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.size() >= kMaxKeys && !entries_.contains(index_key)) entries_.clear();
  Entry& entry = entries_[index_key];
  entry.text = text;
  entry.locations = locations;
}

size_t ParsedEntries::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace kvchaos::meta
