// Sticky bad ranges; see bad_ranges.h.
#include "faultfs/bad_ranges.h"

#include <vector>

namespace kvchaos::faultfs {

namespace {

// Adds [start, end) keeping one entry per start: a second range with the same start widens it.
template <typename Map, typename Range>
void Insert(Map& ranges, uint64_t start, Range range) {
  auto [it, inserted] = ranges.try_emplace(start, std::move(range));
  if (!inserted && it->second.end < range.end) it->second.end = range.end;
}

}  // namespace

void BadRanges::Mark(uint64_t file, uint64_t offset, uint64_t length, const std::string& rule) {
  if (length == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto& ranges = files_[file];
  const size_t before = ranges.size();
  // Overlapping ranges are not merged: each keeps the rule that made it.
  Insert(ranges, offset, Range{offset + length, rule});
  count_.fetch_add(ranges.size() - before, std::memory_order_release);
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
  const size_t before = f->second.size();
  const uint64_t end = offset + length;
  std::vector<std::pair<uint64_t, Range>> keep;
  for (auto it = f->second.begin(); it != f->second.end();) {
    const uint64_t start = it->first;
    if (start >= end || it->second.end <= offset) {
      ++it;
      continue;
    }
    Range range = it->second;
    it = f->second.erase(it);
    // Parts outside the rewritten span stay bad.
    if (start < offset) keep.push_back({start, Range{offset, range.rule}});
    if (range.end > end) keep.push_back({end, Range{range.end, range.rule}});
  }
  for (auto& [start, range] : keep) Insert(f->second, start, std::move(range));
  const size_t after = f->second.size();
  if (after == 0) files_.erase(f);
  if (after >= before) {
    count_.fetch_add(after - before, std::memory_order_release);
  } else {
    count_.fetch_sub(before - after, std::memory_order_release);
  }
}

}  // namespace kvchaos::faultfs
