// Sticky bad ranges; see bad_ranges.h.
#include "faultfs/bad_ranges.h"

#include <vector>

namespace kvchaos::faultfs {

void BadRanges::Mark(uint64_t file, uint64_t offset, uint64_t length, const std::string& rule) {
  if (length == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto& ranges = files_[file];
  // Merging is unnecessary: overlapping ranges just both report.
  auto [it, inserted] = ranges.try_emplace(offset, Range{offset + length, rule});
  if (!inserted && it->second.end < offset + length) it->second.end = offset + length;
  if (inserted) count_.fetch_add(1, std::memory_order_release);
}

std::optional<std::string> BadRanges::Overlapping(uint64_t file, uint64_t offset, uint64_t length) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto f = files_.find(file);
  if (f == files_.end()) return std::nullopt;
  const uint64_t end = offset + std::max<uint64_t>(length, 1);
  for (const auto& [start, range] : f->second) {
    if (start >= end) break;
    if (range.end > offset) return range.rule;
  }
  return std::nullopt;
}

void BadRanges::Heal(uint64_t file, uint64_t offset, uint64_t length) {
  if (length == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto f = files_.find(file);
  if (f == files_.end()) return;
  const uint64_t end = offset + length;
  std::vector<std::pair<uint64_t, Range>> keep;
  size_t removed = 0;
  for (auto it = f->second.begin(); it != f->second.end();) {
    const uint64_t start = it->first;
    Range range = it->second;
    if (start >= end || range.end <= offset) {
      ++it;
      continue;
    }
    it = f->second.erase(it);
    ++removed;
    // Parts outside the rewritten span stay bad.
    if (start < offset) keep.push_back({start, Range{offset, range.rule}});
    if (range.end > end) keep.push_back({end, Range{range.end, range.rule}});
  }
  for (auto& [start, range] : keep) f->second.emplace(start, std::move(range));
  if (f->second.empty()) files_.erase(f);
  count_.fetch_add(keep.size(), std::memory_order_release);
  count_.fetch_sub(removed, std::memory_order_release);
}

}  // namespace kvchaos::faultfs
