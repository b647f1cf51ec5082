// How the etcd backend reads the JSON gateway's answers: proto3 JSON as etcd 3.4 writes it is
// read back exactly, and answers of another shape are Unavailable naming the call and the field
// rather than read as "no key" or a zero revision.
#include "core/election/etcd_json.h"

#include <gtest/gtest.h>

namespace kvchaos::election::etcd_json {
namespace {

TEST(EtcdJsonTest, RangeAnswerAsEtcdWritesIt) {
  // A real etcd 3.4.23 answer (int64 fields as strings, zero fields left out).
  const auto range = nlohmann::json::parse(
      R"({"header":{"cluster_id":"8570459336700167655","revision":"2"},"kvs":[{"key":"aw==","create_revision":"2",)"
      R"("mod_revision":"2","version":"1","value":"dg==","lease":"8699443970169432329"}],"count":"1"})");
  auto records = Records(range, "GetValue('k')");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].key, "k");
  EXPECT_EQ((*records)[0].value, "v");
  EXPECT_EQ((*records)[0].create_revision, 2);
  EXPECT_EQ((*records)[0].lease, 8699443970169432329);
  auto none = Records(nlohmann::json::parse(R"({"header":{"revision":"2"}})"), "GetValue('k')");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "no kvs field means no key";
  // An empty value is left out too.
  auto empty = Records(nlohmann::json::parse(R"({"kvs":[{"key":"aw==","create_revision":"3"}]})"), "x");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)[0].value, "");
  EXPECT_EQ((*empty)[0].lease, 0);
}

TEST(EtcdJsonTest, OtherShapesAreRefusedNamingTheField) {
  struct Case {
    const char* answer;
    const char* named;
  };
  const Case cases[] = {
      {R"({"kvs":{}})", "'kvs'"},
      {R"({"kvs":[{"key":"!!","create_revision":"1"}]})", "'key' that is not base64"},
      {R"({"kvs":[{"key":"aw==","value":5,"create_revision":"1"}]})", "'value'"},
      {R"({"kvs":[{"key":"aw==","create_revision":"x1"}]})", "'create_revision' = 'x1'"},
      {R"({"kvs":[{"key":"aw=="}]})", "without a create_revision"},
  };
  for (const Case& c : cases) {
    auto r = Records(nlohmann::json::parse(c.answer), "GetValue('k')");
    ASSERT_FALSE(r.ok()) << c.answer << " was read";
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(r.status().message().find("GetValue('k')"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.named), std::string::npos) << c.answer << ": " << r.status().message();
  }
}

TEST(EtcdJsonTest, TransactionAnswers) {
  const auto txn = nlohmann::json::parse(
      R"({"succeeded":true,"responses":[{"response_range":{"kvs":[]}},{"response_delete_range":{"deleted":"1"}}]})");
  EXPECT_TRUE(Succeeded(txn));
  EXPECT_FALSE(Succeeded(nlohmann::json::parse(R"({"header":{}})"))) << "false is left out of the answer";
  EXPECT_TRUE(TxnResponse(txn, 0, "response_range", "x").ok());
  EXPECT_EQ(TxnResponse(txn, 1, "response_range", "Unlock('L')").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(TxnResponse(txn, 2, "response_range", "x").status().code(), StatusCode::kUnavailable);
}

TEST(EtcdJsonTest, PrefixEndAndInt64) {
  EXPECT_EQ(PrefixEnd("abc/"), "abc0");
  EXPECT_EQ(PrefixEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixEnd(""), std::string(1, '\0'));
  EXPECT_EQ(*Int64(nlohmann::json::parse(R"({"TTL":"30"})"), "TTL", "x"), 30);
  EXPECT_EQ(*Int64(nlohmann::json::parse(R"({"TTL":-1})"), "TTL", "x"), -1);
  EXPECT_EQ(*Int64(nlohmann::json::parse(R"({})"), "TTL", "x"), 0) << "absent means zero";
  EXPECT_FALSE(Int64(nlohmann::json::parse(R"({"TTL":"9223372036854775808"})"), "TTL", "x").ok()) << "overflow";
}

}  // namespace
}  // namespace kvchaos::election::etcd_json
