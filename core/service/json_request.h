// JsonRequest: strict reading of one HTTP/JSON request body. The body must be a JSON object; each
// field is read once by name with its expected type, and Finish() reports any field that was
// never read as unknown. The first problem wins and names the field ("keys[2]: expected a
// string"), so a handler returns 400 before it changes anything.
//
// Parsing is bounded (JsonLimits): an array with more than max_array_entries entries, more than
// max_values JSON values in all, or nesting deeper than max_depth is refused naming the field and
// the limit, and the parser drops what is past the bound as it reads, so a body of a million keys
// never becomes a million-entry document in memory.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace kvchaos::service {

struct JsonLimits {
  size_t max_array_entries = 16384;
  size_t max_values = 8 * 16384;
  int max_depth = 32;
  // Names the array bound in messages ("kvcm.service.http_max_keys_per_call").
  std::string array_limit_name = "kvcm.service.http_max_keys_per_call";
};

class JsonRequest {
 public:
  JsonRequest() = default;  // an empty request (Result<> needs a default)
  // An empty body reads as {} (for calls without arguments).
  static Result<JsonRequest> Parse(std::string_view body, const JsonLimits& limits = {});
  // A body that is a JSON value already (a transport that carries values, the simulator's): the
  // same bounds and messages as Parse; null reads as {}.
  static Result<JsonRequest> FromValue(nlohmann::json body, const JsonLimits& limits = {});

  std::optional<std::string> String(std::string_view field, bool required);
  std::optional<int64_t> Int(std::string_view field, bool required);
  std::optional<std::vector<std::string>> Strings(std::string_view field, bool required);
  std::optional<std::vector<int64_t>> Ints(std::string_view field, bool required);
  std::optional<std::vector<uint8_t>> Bools(std::string_view field, bool required);
  // Any JSON object (parsed further by its own reader).
  std::optional<nlohmann::json> Object(std::string_view field, bool required);
  // Any JSON array (its elements parsed further by their own reader).
  std::optional<nlohmann::json> Array(std::string_view field, bool required);

  // OK, or InvalidArgument naming the first bad, missing or unknown field.
  Status Finish();

 private:
  explicit JsonRequest(nlohmann::json body) : body_(std::move(body)) {}
  const nlohmann::json* Find(std::string_view field, bool required);
  void Fail(std::string message);

  nlohmann::json body_;
  std::set<std::string, std::less<>> read_;
  std::string error_;
};

}  // namespace kvchaos::service
