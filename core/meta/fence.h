// The fence rule of the meta index, in one place. Every write (and RaiseFence) carries the fencing
// token of the leader that issues it; the index remembers the newest token it has seen:
//   - a token older than the newest is refused (StaleFencingToken) and nothing changes;
//   - an equal token is accepted (the same term writing again);
//   - a newer token is accepted and becomes the newest.
// With it, the compare-and-set rule of conditional writes (CheckWriteId, below) and the order rule
// of deletes (WrittenAfter).
// LocalMetaIndexer applies these functions; RedisMetaIndexer's Lua scripts implement the same
// rules on the server (they must be atomic with the write), and core/meta/tests/fence_contract_test.cc
// runs one table of cases against these functions, the local indexer and a real redis-server.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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

// The compare-and-set rule of conditional writes (meta_indexer.h, MetaWrite), per key: `current`
// is the write id the record carries ("" for no record or none stored).
enum class WriteIdVerdict { kApply, kAlreadyApplied, kConflict };

constexpr WriteIdVerdict CheckWriteId(std::string_view current, std::string_view expected, std::string_view write_id) {
  if (write_id.empty()) return WriteIdVerdict::kApply;
  if (current == write_id) return WriteIdVerdict::kAlreadyApplied;
  return current == expected ? WriteIdVerdict::kApply : WriteIdVerdict::kConflict;
}

// The same for a conditional delete: an absent record is already deleted.
constexpr WriteIdVerdict CheckDeleteWriteId(bool present, std::string_view current, std::string_view expected) {
  if (!present) return WriteIdVerdict::kAlreadyApplied;
  return current == expected ? WriteIdVerdict::kApply : WriteIdVerdict::kConflict;
}

// Write ids name their term and their place in it: "w-<token>-<n>", with n from one counter per
// term (CacheManager), so two ids of one term are ordered as their writes were issued.
std::string MakeWriteId(uint64_t fencing_token, uint64_t n);
bool IsWriteId(std::string_view id);

// The rule of an ordered delete (MetaIndexer::Delete with a delete id): the delete carries a write
// id of its own, taken when it is issued, and a record written by a write issued after it (later
// in the same term, or in a later term) is kept. So a late attempt of a delete cannot remove a
// block written and acknowledged after the delete was sent, and no read is needed first. A record
// without a well-formed id (an unconditional writer's) was written before: it is deleted. Numbers
// are compared as decimal strings, by length and then text, exactly as the Lua script does.
bool WrittenAfter(std::string_view record_id, std::string_view delete_id);

// InvalidArgument unless a Delete's conditions fit its keys: no expected ids or one per key, a
// delete id that is a write id, and not both kinds at once.
Status CheckDeleteArguments(size_t keys, size_t expected_write_ids, std::string_view delete_id);

// The Conflict status for a conditional write of `key` that found `current` instead of `expected`.
Status WriteConflict(const std::string& where, std::string_view key, std::string_view current,
                     std::string_view expected);

// The StaleFencingToken status for a refused `token` (`where`: the index, for the message).
Status StaleFencingToken(const std::string& where, uint64_t token, uint64_t newest);

}  // namespace kvchaos::meta
