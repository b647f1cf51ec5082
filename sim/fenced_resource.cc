#include "sim/fenced_resource.h"

#include <algorithm>
#include <string>

namespace kvchaos::sim {

Status FencedResource::Write(int node, uint64_t token, TrueNs t) {
  (void)t;
  ++counters_.writes;
  const bool stale = token < max_presented_;
  max_presented_ = std::max(max_presented_, token);
  if (fence_check_ && token < max_accepted_) {
    ++counters_.rejected;
    if (stale) ++counters_.stale_rejected;
    return Status(StatusCode::kStaleFencingToken, "write from node " + std::to_string(node) + " with token " +
                                                      std::to_string(token) + " rejected: token " +
                                                      std::to_string(max_accepted_) + " was already seen");
  }
  ++counters_.accepted;
  if (stale) ++counters_.stale_accepted;
  max_accepted_ = std::max(max_accepted_, token);
  return Status::Ok();
}

}  // namespace kvchaos::sim
