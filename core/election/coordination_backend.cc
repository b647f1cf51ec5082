// Checks shared by every CoordinationBackend implementation.
#include "core/election/coordination_backend.h"

#include <string>

namespace kvchaos::election {

Status ValidateKey(std::string_view what, std::string_view key) {
  if (key.empty()) return Status::InvalidArgument(std::string(what) + " is empty");
  if (key.size() > 512) {
    return Status::InvalidArgument(std::string(what) + " '" + std::string(key.substr(0, 32)) + "…' is " +
                                   std::to_string(key.size()) + " bytes; at most 512 are allowed");
  }
  for (size_t i = 0; i < key.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(key[i]);
    if (c <= 0x20 || c >= 0x7f) {
      return Status::InvalidArgument(std::string(what) + " '" + std::string(key) + "' has a space or a non-printable byte at offset " +
                                     std::to_string(i) + " (keys are printable ASCII without spaces)");
    }
  }
  return Status::Ok();
}

Status ValidatePositive(std::string_view what, Duration d) {
  if (d <= Duration::zero()) {
    return Status::InvalidArgument(std::string(what) + " must be > 0, got " + std::to_string(ToMillis(d)) + " ms");
  }
  return Status::Ok();
}

Status ValidateTokenFloor(FencingToken floor) {
  if (floor > kMaxTokenFloor) {
    return Status::InvalidArgument("fencing token floor " + std::to_string(floor) + " is above " +
                                   std::to_string(kMaxTokenFloor) + ": no newer token would fit a 64-bit counter");
  }
  return Status::Ok();
}

}  // namespace kvchaos::election
