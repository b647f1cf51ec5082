// Properties of routing: the candidate order of a block is a permutation of the available
// backends that starts at the first available one at or after hash % n and walks forward with
// wrap-around; a block's first choice never changes while its primary is available, whatever
// happens to the other paths.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "core/store/backend_set.h"

namespace kvchaos::store {
namespace {

BackendSet MakeSet(int n) {
  std::vector<std::string> paths;
  for (int i = 0; i < n; ++i) paths.push_back("/p" + std::to_string(i));
  return BackendSet(Runtime::Real(), paths, 1, 1);  // window 1, threshold 1: one result flips a path
}

// Applies up/down flags with window-1 semantics: a failure trips, a probe success recovers.
void SetStates(BackendSet& set, const std::vector<bool>& up) {
  for (int i = 0; i < set.size(); ++i) {
    if (up[i]) set.Record(i, true, SampleSource::kProbe);
    else set.Record(i, false, SampleSource::kBusiness);
  }
}

RC_GTEST_PROP(StoreRoutingProps, CandidateOrderIsAForwardPermutationOfAvailablePaths, (uint64_t hash)) {
  const int n = *rc::gen::inRange(1, 65);
  const auto up = *rc::gen::container<std::vector<bool>>(static_cast<size_t>(n), rc::gen::arbitrary<bool>());
  BackendSet set = MakeSet(n);
  SetStates(set, up);
  const std::vector<int> order = set.CandidateOrder(hash);
  std::vector<int> available;
  for (int i = 0; i < n; ++i) {
    if (up[i]) available.push_back(i);
  }
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  RC_ASSERT(sorted == available);  // a permutation of the available set, no repeats
  if (order.empty()) return;
  const int primary = static_cast<int>(hash % static_cast<uint64_t>(n));
  int first = primary;
  while (!up[first]) first = (first + 1) % n;
  RC_ASSERT(order.front() == first);
  for (size_t i = 1; i < order.size(); ++i) {
    // Each next candidate is the nearest available one forward (mod n) from the previous.
    int expect = (order[i - 1] + 1) % n;
    while (!up[expect]) expect = (expect + 1) % n;
    RC_ASSERT(order[i] == expect);
  }
}

RC_GTEST_PROP(StoreRoutingProps, RouteNeverChangesWhilePrimaryIsAvailable, (uint64_t hash)) {
  const int n = *rc::gen::inRange(1, 65);
  BackendSet set = MakeSet(n);
  const int primary = static_cast<int>(hash % static_cast<uint64_t>(n));
  const auto changes = *rc::gen::container<std::vector<std::pair<int, bool>>>(
      rc::gen::pair(rc::gen::inRange(0, n), rc::gen::arbitrary<bool>()));
  for (const auto& [backend, up] : changes) {
    if (backend == primary) continue;  // the primary stays available
    if (up) set.Record(backend, true, SampleSource::kProbe);
    else set.Record(backend, false, SampleSource::kBusiness);
    RC_ASSERT(set.SelectNext(hash, 0) == primary);
  }
}

}  // namespace
}  // namespace kvchaos::store
