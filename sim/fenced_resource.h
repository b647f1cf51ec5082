// FencedResource: the simulated meta indexer's write check, the thing fencing tokens protect.
// A write carries the writer's fencing token; with the fence on, a token older than the newest
// the resource has accepted is rejected (kStaleFencingToken). Independently of that check (which
// a planted bug may switch off), the resource keeps the ground truth: a write is *stale* when a
// newer token has already been presented to it, whether or not the fence let it through. So
// "stale writes accepted" is measured, not assumed.
#pragma once

#include <cstdint>

#include "core/common/status.h"
#include "sim/sim_clock.h"

namespace kvchaos::sim {

struct FencedResourceCounters {
  uint64_t writes = 0;
  uint64_t accepted = 0;
  uint64_t rejected = 0;
  uint64_t stale_accepted = 0;  // safety violation: a write older than a presented token went in
  uint64_t stale_rejected = 0;  // the fence doing its job
};

class FencedResource {
 public:
  explicit FencedResource(bool fence_check = true) : fence_check_(fence_check) {}

  // A data-plane write (or a new leader's announcement of its token) from `node` at true time `t`.
  Status Write(int node, uint64_t token, TrueNs t);
  // The backend lost its data (restart without persistence): the fence forgets its newest token;
  // the ground truth does not.
  void Wipe() { max_accepted_ = 0; }

  const FencedResourceCounters& counters() const { return counters_; }
  uint64_t max_accepted() const { return max_accepted_; }

 private:
  bool fence_check_;
  uint64_t max_accepted_ = 0;
  uint64_t max_presented_ = 0;
  FencedResourceCounters counters_;
};

}  // namespace kvchaos::sim
