// The fence rule of the meta index, in one place. Every write (and RaiseFence) carries the fencing
// token of the leader that issues it; the index remembers the newest token it has seen:
//   - a token older than the newest is refused (StaleFencingToken) and nothing changes;
//   - an equal token is accepted (the same term writing again);
//   - a newer token is accepted and becomes the newest.
// LocalMetaIndexer applies this function; RedisMetaIndexer's Lua script implements the same rule
// on the server (it must be atomic with the write), and core/meta/tests/fence_contract_test.cc
// runs one table of cases against this function, the local indexer and a real redis-server.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.h"

namespace kvchaos::meta {

struct FenceVerdict {
  bool accepted = false;
  uint64_t newest = 0;  // the index's newest token after the write (unchanged when refused)
};

constexpr FenceVerdict CheckFence(uint64_t newest, uint64_t token) {
  if (token < newest) return FenceVerdict{false, newest};
  return FenceVerdict{true, token};
}

// The StaleFencingToken status for a refused `token` (`where`: the index, for the message).
Status StaleFencingToken(const std::string& where, uint64_t token, uint64_t newest);

}  // namespace kvchaos::meta
