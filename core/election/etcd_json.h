// How the etcd coordination backend writes its requests to etcd's v3 JSON gateway and reads the
// answers: pure functions over nlohmann::json, apart from the HTTP handling (etcd_gateway.h).
// The gateway writes proto3 JSON: int64 fields as decimal strings, bytes fields (keys, values) as
// base64, and fields holding their zero value left out. An answer of another shape (a proxy,
// another etcd version, a broken server) is Unavailable naming the call and the field, and no
// field is read that the answer does not have.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace kvchaos::election::etcd_json {

// One key as a range answer lists it (key and value decoded).
struct KeyRecord {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t lease = 0;  // 0: attached to no lease
};

// An int64 field: a decimal string or a JSON integer; 0 when absent.
Result<int64_t> Int64(const nlohmann::json& object, std::string_view field, std::string_view what);

// The kvs of a range answer (also a txn's "response_range"), in the answer's order.
Result<std::vector<KeyRecord>> Records(const nlohmann::json& range, std::string_view what);
// A txn answer: whether its compares held ("succeeded", absent when false).
bool Succeeded(const nlohmann::json& txn);
// The `kind` ("response_range") of a txn answer's i-th response.
Result<nlohmann::json> TxnResponse(const nlohmann::json& txn, size_t i, std::string_view kind, std::string_view what);

// The first key past every key that starts with `prefix` (etcd's range_end for a prefix); "\0"
// (every key) for an empty prefix or one made only of 0xff bytes.
std::string PrefixEnd(std::string_view prefix);

// Request parts.
nlohmann::json RangeOp(std::string_view key);
nlohmann::json PutOp(std::string_view key, std::string_view value, int64_t lease);
nlohmann::json DeleteOp(std::string_view key);
// A compare that holds when `key`'s `target` (CREATE, MOD, LEASE: an int64 field) equals `value`;
// a missing key has 0 there.
nlohmann::json CompareInt(std::string_view key, std::string_view target, int64_t value);
// A compare that holds when `key` exists with `value` (never for a missing key).
nlohmann::json CompareValue(std::string_view key, std::string_view value);

}  // namespace kvchaos::election::etcd_json
