#include "core/meta/fence.h"

namespace kvchaos::meta {

Status StaleFencingToken(const std::string& where, uint64_t token, uint64_t newest) {
  return Status(StatusCode::kStaleFencingToken, where + ": write with fencing token " + std::to_string(token) +
                                                    " rejected, newest seen is " + std::to_string(newest));
}

}  // namespace kvchaos::meta
