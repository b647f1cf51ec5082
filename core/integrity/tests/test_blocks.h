// Helpers for integrity tests: blocks built from strings, kept alive with their IOV spans.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/integrity/checksum.h"

namespace kvchaos::integrity::testutil {

// Owns the bytes of several IOVs and exposes them as a Block.
class OwnedBlock {
 public:
  explicit OwnedBlock(std::vector<std::string> iovs) : data_(std::move(iovs)) {
    for (const std::string& s : data_) spans_.emplace_back(reinterpret_cast<const std::byte*>(s.data()), s.size());
  }
  OwnedBlock(const OwnedBlock&) = delete;
  OwnedBlock& operator=(const OwnedBlock&) = delete;
  Block block() const { return spans_; }

 private:
  std::vector<std::string> data_;
  std::vector<Iov> spans_;
};

inline std::span<const std::byte> Bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace kvchaos::integrity::testutil
