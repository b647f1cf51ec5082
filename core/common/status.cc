#include "core/common/status.h"

#include <array>
#include <cstring>

namespace kvchaos {
namespace {

struct CodeName {
  StatusCode code;
  const char* name;
};

constexpr std::array kCodeNames{
    CodeName{StatusCode::kOk, "OK"},
    CodeName{StatusCode::kNotFound, "NotFound"},
    CodeName{StatusCode::kIoError, "IoError"},
    CodeName{StatusCode::kTimeout, "Timeout"},
    CodeName{StatusCode::kStoreUnhealthy, "StoreUnhealthy"},
    CodeName{StatusCode::kInvalidConfig, "InvalidConfig"},
    CodeName{StatusCode::kChecksumMismatch, "ChecksumMismatch"},
    CodeName{StatusCode::kChecksumUnavailable, "ChecksumUnavailable"},
    CodeName{StatusCode::kInlineHeaderInvalid, "InlineHeaderInvalid"},
    CodeName{StatusCode::kNotLeader, "NotLeader"},
    CodeName{StatusCode::kUnavailable, "Unavailable"},
    CodeName{StatusCode::kInvalidArgument, "InvalidArgument"},
    CodeName{StatusCode::kAlreadyExists, "AlreadyExists"},
    CodeName{StatusCode::kCancelled, "Cancelled"},
    CodeName{StatusCode::kStaleFencingToken, "StaleFencingToken"},
    CodeName{StatusCode::kLockLost, "LockLost"},
    CodeName{StatusCode::kInternal, "Internal"},
    CodeName{StatusCode::kUnauthenticated, "Unauthenticated"},
    CodeName{StatusCode::kCorruption, "Corruption"},
    CodeName{StatusCode::kConflict, "Conflict"},
};

}  // namespace

std::string StatusCodeName(StatusCode code) {
  for (const auto& entry : kCodeNames) {
    if (entry.code == code) return entry.name;
  }
  return "Unknown(" + std::to_string(static_cast<int>(code)) + ")";
}

bool StatusCodeFromName(std::string_view name, StatusCode* code) {
  for (const auto& entry : kCodeNames) {
    if (name == entry.name) {
      *code = entry.code;
      return true;
    }
  }
  return false;
}

std::string ErrnoText(int err) {
  char buf[256];
  // GNU strerror_r returns a pointer that may or may not be buf.
  const char* text = strerror_r(err, buf, sizeof(buf));
  return text;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out = StatusCodeName(code_);
  if (!message_.empty()) out += ": " + message_;
  if (sys_errno_ != 0) out += ": errno=" + std::to_string(sys_errno_) + " (" + ErrnoText(sys_errno_) + ")";
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_, sys_errno_);
}

}  // namespace kvchaos
