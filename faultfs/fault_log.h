// FaultLog: the JSONL record of every fault faultfs injects — one line per fault with a sequence
// number, times, op, path, offset, size, rule id and what was done (which bits flipped, how long
// it slept) — so that a failing run can be explained and replayed. Thread-safe; lines are
// flushed as written so a killed faultfs still leaves a complete log.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos::faultfs {

class FaultLog {
 public:
  // An empty path gives a log that only counts.
  static Result<std::unique_ptr<FaultLog>> Open(const std::string& path);
  ~FaultLog();
  FaultLog(const FaultLog&) = delete;
  FaultLog& operator=(const FaultLog&) = delete;

  // Adds "seq", "t_us" (since the log opened) and "wall_ms" to `record` and appends it.
  void Append(nlohmann::json record);
  uint64_t count() const;

 private:
  FaultLog(std::FILE* file, MonoTime start) : file_(file), start_(start) {}

  mutable std::mutex mu_;
  std::FILE* file_;  // null when only counting
  MonoTime start_;
  uint64_t seq_ = 0;
};

}  // namespace kvchaos::faultfs
