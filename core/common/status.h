// Status: the one error type of kvchaos. A code with a stable name and number, a message that says
// what, where and why, and the errno when a system call failed. Codes never change their number:
// results files and the HTTP API carry them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace kvchaos {

enum class StatusCode : int32_t {
  kOk = 0,
  kNotFound = 1,             // a block or key that does not exist: a cache miss, never a fault
  kIoError = 2,              // a system call failed (errno set)
  kTimeout = 3,              // an attempt or task ran past its deadline
  kStoreUnhealthy = 4,       // no backend of the store is available (upstream -50011)
  kInvalidConfig = 5,        // a config file or value was rejected
  kChecksumMismatch = 6,     // data read back differs from what was written (upstream 118)
  kChecksumUnavailable = 7,  // a checksum was needed but none is stored (upstream 120)
  kInlineHeaderInvalid = 8,  // inline header misconfigured, or a read got another block (upstream 119)
  kNotLeader = 9,            // a data-plane call reached a node that does not lead
  kUnavailable = 10,         // a service or backend cannot be reached now; retry later
  kInvalidArgument = 11,     // a request is malformed (upstream BadArgs)
  kAlreadyExists = 12,
  kCancelled = 13,
  kStaleFencingToken = 14,   // a write carried a fencing token older than the newest seen
  kLockLost = 15,            // a lease or lock is no longer held by the caller
  kInternal = 16,            // a bug: an invariant of kvchaos itself broke
  kUnauthenticated = 17,     // a request without valid credentials (the node's admin token)
  kCorruption = 18,          // stored bytes are damaged beyond a checksum difference (a block's inline header)
  kConflict = 19,            // a conditional write found its record changed since it was read; read again
};

// Stable name of a code ("NotFound", …); "Unknown(<n>)" for numbers outside the enum.
std::string StatusCodeName(StatusCode code);
// Parses a stable name back; false when the name is not a code.
bool StatusCodeFromName(std::string_view name, StatusCode* code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, int sys_errno = 0)
      : code_(code), sys_errno_(sys_errno), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  // An I/O error carrying errno; ToString() appends its text.
  static Status IoError(std::string msg, int err) { return {StatusCode::kIoError, std::move(msg), err}; }
  static Status Timeout(std::string msg) { return {StatusCode::kTimeout, std::move(msg)}; }
  static Status StoreUnhealthy(std::string msg) { return {StatusCode::kStoreUnhealthy, std::move(msg)}; }
  static Status InvalidConfig(std::string msg) { return {StatusCode::kInvalidConfig, std::move(msg)}; }
  static Status InvalidArgument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  static Status ChecksumMismatch(std::string msg) { return {StatusCode::kChecksumMismatch, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
  static Status NotLeader(std::string msg) { return {StatusCode::kNotLeader, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  int sys_errno() const { return sys_errno_; }
  const std::string& message() const { return message_; }

  // "IoError: <message>: errno=5 (Input/output error)" or "OK".
  std::string ToString() const;

  // Prefixes the message with context ("backend '/p1': "), keeping code and errno.
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.sys_errno_ == b.sys_errno_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  int sys_errno_ = 0;
  std::string message_;
};

// Text of an errno value, thread-safe ("Input/output error").
std::string ErrnoText(int err);

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}                  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}          // NOLINT: implicit by design
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return value_; }
  const T& value() const& { return value_; }
  T&& value() && { return std::move(value_); }
  T* operator->() { return &value_; }
  const T* operator->() const { return &value_; }
  T& operator*() { return value_; }
  const T& operator*() const { return value_; }

 private:
  Status status_;
  T value_{};
};

}  // namespace kvchaos

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define KVCHAOS_RETURN_IF_ERROR(expr)                 \
  do {                                                \
    ::kvchaos::Status kvchaos_status_ = (expr);       \
    if (!kvchaos_status_.ok()) return kvchaos_status_; \
  } while (0)
