// meta-swap, the meta fault of both modes: two committed cache entries of the meta index exchange
// their records, so each key's locations (and checksums) describe the other key's block — what a
// location-id collision or a stale index entry does. The simulator applies it to its in-memory
// index, real mode to the meta index's redis-server; both through meta::MetaIndexer, with the
// newest fencing token (so the fence lets the write in) and the same choice of keys.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/common/rng.h"
#include "core/common/status.h"
#include "core/meta/meta_indexer.h"

namespace kvchaos::sim {

struct MetaSwap {
  std::vector<std::string> keys;  // the two index keys ("cache:<key>")
  meta::MetaRecord first;         // keys[0]'s record before the swap (keys[1] holds it now)
  meta::MetaRecord second;        // keys[1]'s record before the swap
};

// Swaps two cache entries whose every location is committed (a record still being written would
// change under the swap and could not be put back), leaving out `exclude` (keys swapped already);
// drawn from `rng` among them in key order. NotFound when fewer than two can be swapped.
Result<MetaSwap> SwapCacheEntries(meta::MetaIndexer& index, Rng& rng, const std::set<std::string>& exclude);

// Puts both records back when the two keys still hold what the swap put there; false (nothing
// written) when either changed since.
Result<bool> SwapBack(meta::MetaIndexer& index, const MetaSwap& swap);

}  // namespace kvchaos::sim
