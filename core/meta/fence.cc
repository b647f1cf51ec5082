#include "core/meta/fence.h"

namespace kvchaos::meta {

Status StaleFencingToken(const std::string& where, uint64_t token, uint64_t newest) {
  return Status(StatusCode::kStaleFencingToken, where + ": write with fencing token " + std::to_string(token) +
                                                    " rejected, newest seen is " + std::to_string(newest));
}

Status WriteConflict(const std::string& where, std::string_view key, std::string_view current,
                     std::string_view expected) {
  auto id = [](std::string_view v) { return v.empty() ? std::string("none") : "'" + std::string(v) + "'"; };
  return Status(StatusCode::kConflict, where + ": record '" + std::string(key) + "' changed since it was read (write id " +
                                           id(current) + ", expected " + id(expected) + "); read it again");
}

}  // namespace kvchaos::meta
