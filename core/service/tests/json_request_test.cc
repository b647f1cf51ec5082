// JsonRequest's bounds: arrays past the key limit, too many values or too deep a nesting are
// refused naming the field and the limit, before a handler sees the request.
#include "core/service/json_request.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvchaos::service {
namespace {

std::string Keys(int n) {
  std::string out = R"({"storage": "s", "keys": [)";
  for (int i = 0; i < n; ++i) out += (i ? ",\"k" : "\"k") + std::to_string(i) + "\"";
  return out + "]}";
}

TEST(JsonRequestTest, AnArrayPastTheLimitIsRefusedNamingItsField) {
  JsonLimits limits;
  limits.max_array_entries = 10;
  limits.max_values = 1000;
  EXPECT_TRUE(JsonRequest::Parse(Keys(10), limits).ok());
  auto r = JsonRequest::Parse(Keys(11), limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "keys: more than 10 entries (kvcm.service.http_max_keys_per_call)");
}

TEST(JsonRequestTest, NestedArraysAndTheValueTotalAreBoundedToo) {
  JsonLimits limits;
  limits.max_array_entries = 4;
  limits.max_values = 12;
  auto inner = JsonRequest::Parse(R"({"iov_layouts": [[[1, 2]], [[1, 2, 3, 4, 5]]]})", limits);
  ASSERT_FALSE(inner.ok());
  EXPECT_EQ(inner.status().message(), "iov_layouts: more than 4 entries (kvcm.service.http_max_keys_per_call)");
  auto total = JsonRequest::Parse(R"({"a": [1, 2, 3, 4], "b": [1, 2, 3, 4], "c": [1, 2, 3, 4]})", limits);
  ASSERT_FALSE(total.ok());
  EXPECT_NE(total.status().message().find("more than 12 JSON values"), std::string::npos) << total.status().message();
}

TEST(JsonRequestTest, DeepNestingIsRefused) {
  std::string deep = R"({"x": )" + std::string(100, '[') + std::string(100, ']') + "}";
  auto r = JsonRequest::Parse(deep, JsonLimits{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("x: nested deeper than 32 levels"), std::string::npos) << r.status().message();
}

TEST(JsonRequestTest, AMillionKeysAreRefusedWithoutKeepingThem) {
  // The issue's 1M-key StartWriteCache kept 2.54 GB; past the bound the parser drops every value.
  auto r = JsonRequest::Parse(Keys(1000000), JsonLimits{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "keys: more than 16384 entries (kvcm.service.http_max_keys_per_call)");
}

// The simulator hands the node JSON values, not text: the same bodies must get the same verdicts
// and messages as over HTTP.
TEST(JsonRequestTest, AValueBodyIsBoundedExactlyAsItsText) {
  JsonLimits limits;
  limits.max_array_entries = 4;
  limits.max_values = 12;
  const std::vector<std::string> bodies = {
      R"({"keys": ["a", "b"]})",
      Keys(5),
      R"({"iov_layouts": [[[1, 2]], [[1, 2, 3, 4, 5]]]})",
      R"({"a": [1, 2, 3, 4], "b": [1, 2, 3, 4], "c": [1, 2, 3, 4]})",
      R"({"x": )" + std::string(40, '[') + std::string(40, ']') + "}",
      R"({"x": {"y": {"z": [1, 2, 3, 4, 5]}}})",
      R"([1, 2])",
      R"({})",
  };
  for (const std::string& text : bodies) {
    auto from_text = JsonRequest::Parse(text, limits);
    auto from_value = JsonRequest::FromValue(nlohmann::json::parse(text), limits);
    EXPECT_EQ(from_value.ok(), from_text.ok()) << text;
    if (!from_text.ok() && !from_value.ok()) {
      EXPECT_EQ(from_value.status().message(), from_text.status().message()) << text;
    }
  }
  EXPECT_TRUE(JsonRequest::FromValue(nlohmann::json(nullptr), limits).ok()) << "a call without a body reads as {}";
}

}  // namespace
}  // namespace kvchaos::service
