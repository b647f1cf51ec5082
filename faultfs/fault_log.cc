// JSONL fault log; see fault_log.h.
#include "faultfs/fault_log.h"

#include <cerrno>

#include "core/common/json_text.h"

namespace kvchaos::faultfs {

Result<std::unique_ptr<FaultLog>> FaultLog::Open(const std::string& path) {
  std::FILE* file = nullptr;
  if (!path.empty()) {
    file = std::fopen(path.c_str(), "a");
    if (file == nullptr) return Status::IoError("cannot open fault log '" + path + "'", errno);
  }
  return std::unique_ptr<FaultLog>(new FaultLog(file, Runtime::Real().Now()));
}

FaultLog::~FaultLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void FaultLog::Append(nlohmann::json record) {
  Runtime& rt = Runtime::Real();
  const auto t_us = std::chrono::duration_cast<std::chrono::microseconds>(rt.Now() - start_).count();
  const auto wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(rt.WallNow().time_since_epoch()).count();
  std::lock_guard<std::mutex> lock(mu_);
  record["seq"] = ++seq_;
  record["t_us"] = t_us;
  record["wall_ms"] = wall_ms;
  if (file_ == nullptr) return;
  // Paths come from the file system and need not be UTF-8.
  const std::string line = DumpJson(record) + "\n";
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

uint64_t FaultLog::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seq_;
}

}  // namespace kvchaos::faultfs
