// kvchaos.Error: the Python exception every failed call raises. It carries the Status a C++ call
// returned: `code` (the stable code name, "ChecksumMismatch"), `message` and `errno` (0 unless a
// system call failed); str(e) is Status::ToString() ("IoError: ...: errno=5 (Input/output error)").
#pragma once

#include <pybind11/pybind11.h>

#include <utility>

#include "core/common/status.h"

namespace kvchaos::python {

// Thrown by the bindings; the translator registered by RegisterErrors turns it into kvchaos.Error.
class StatusError : public std::exception {
 public:
  explicit StatusError(Status status) : status_(std::move(status)), text_(status_.ToString()) {}
  const Status& status() const { return status_; }
  const char* what() const noexcept override { return text_.c_str(); }

 private:
  Status status_;
  std::string text_;
};

// Defines kvchaos.Error on `m` and the translator of StatusError.
void RegisterErrors(pybind11::module_& m);

// Raises (through StatusError) when `status` is not OK.
inline void ThrowIfError(const Status& status) {
  if (!status.ok()) throw StatusError(status);
}

// The value of an OK result; raises otherwise.
template <typename T>
T ValueOrThrow(Result<T> result) {
  ThrowIfError(result.status());
  return std::move(result).value();
}

}  // namespace kvchaos::python
