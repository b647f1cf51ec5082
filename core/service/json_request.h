// JsonRequest: strict reading of one HTTP/JSON request body. The body must be a JSON object; each
// field is read once by name with its expected type, and Finish() reports any field that was
// never read as unknown. The first problem wins and names the field ("keys[2]: expected a
// string"), so a handler returns 400 before it changes anything.
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

class JsonRequest {
 public:
  JsonRequest() = default;  // an empty request (Result<> needs a default)
  // An empty body reads as {} (for calls without arguments).
  static Result<JsonRequest> Parse(std::string_view body);

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
