#include "core/meta/fence.h"

namespace kvchaos::meta {
namespace {

// "w-<token>-<n>" -> its two digit strings.
bool SplitWriteId(std::string_view id, std::string_view* token, std::string_view* n) {
  if (!id.starts_with("w-")) return false;
  id.remove_prefix(2);
  const size_t dash = id.find('-');
  if (dash == std::string_view::npos) return false;
  *token = id.substr(0, dash);
  *n = id.substr(dash + 1);
  auto digits = [](std::string_view v) {
    return !v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return digits(*token) && digits(*n);
}

// a < b for decimal digit strings without leading zeros (the scripts' `older`).
bool NumberBefore(std::string_view a, std::string_view b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

}  // namespace

std::string MakeWriteId(uint64_t fencing_token, uint64_t n) {
  return "w-" + std::to_string(fencing_token) + "-" + std::to_string(n);
}

bool IsWriteId(std::string_view id) {
  std::string_view token, n;
  return SplitWriteId(id, &token, &n);
}

bool WrittenAfter(std::string_view record_id, std::string_view delete_id) {
  std::string_view rt, rn, dt, dn;
  if (!SplitWriteId(record_id, &rt, &rn) || !SplitWriteId(delete_id, &dt, &dn)) return false;
  if (rt != dt) return NumberBefore(dt, rt);
  return NumberBefore(dn, rn);
}

Status CheckDeleteArguments(size_t keys, size_t expected_write_ids, std::string_view delete_id) {
  if (expected_write_ids != 0 && expected_write_ids != keys) {
    return Status::InvalidArgument("meta index: " + std::to_string(expected_write_ids) + " expected write ids for " +
                                   std::to_string(keys) + " keys");
  }
  if (delete_id.empty()) return Status::Ok();
  if (expected_write_ids != 0) {
    return Status::InvalidArgument("meta index: a delete takes expected write ids or a delete id, not both");
  }
  if (!IsWriteId(delete_id)) {
    return Status::InvalidArgument("meta index: delete id '" + std::string(delete_id) +
                                   "' is not a write id (w-<token>-<n>)");
  }
  return Status::Ok();
}

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
