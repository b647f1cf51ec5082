// BadRanges: the "sticky" bad ranges of faultfs files, like latent sector errors. A bad_range
// hit marks a byte range of a file; every later read that overlaps it fails with EIO, whatever
// the rules say, until a write covers that part of the range again (rewriting heals it).
// Files are keyed by the source's (device, inode), so renames and hard links keep their ranges.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace kvchaos::faultfs {

class BadRanges {
 public:
  void Mark(uint64_t file, uint64_t offset, uint64_t length, const std::string& rule);
  // The rule that marked the first bad range overlapping [offset, offset + length), if any.
  std::optional<std::string> Overlapping(uint64_t file, uint64_t offset, uint64_t length) const;
  // A successful write of [offset, offset + length) heals what it covers.
  void Heal(uint64_t file, uint64_t offset, uint64_t length);
  // Cheap check for the passthrough's fast path.
  bool empty() const { return count_.load(std::memory_order_acquire) == 0; }

 private:
  struct Range {
    uint64_t end;
    std::string rule;
  };
  mutable std::mutex mu_;
  std::map<uint64_t, std::map<uint64_t, Range>> files_;  // file → start → range (guarded by mu_)
  std::atomic<size_t> count_{0};
};

}  // namespace kvchaos::faultfs
