// DataIntegrityConfig: defaults, JSON round trip, every rejection path of the seed with a message
// that names the field.
#include "core/integrity/integrity_config.h"

#include <gtest/gtest.h>

namespace kvchaos::integrity {
namespace {

using nlohmann::json;

Status ParseError(const json& j) {
  Result<DataIntegrityConfig> r = DataIntegrityConfig::FromJson(j, "storage 'nfs'.integrity");
  return r.status();
}

TEST(DataIntegrityConfig, DefaultsAreAllOffWithTheCompatibleAlgorithm) {
  Result<DataIntegrityConfig> r = DataIntegrityConfig::FromJson(json::object());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->enable_meta_checksum);
  EXPECT_FALSE(r->enable_inline_header);
  EXPECT_EQ(r->inline_header_version, 0);
  EXPECT_EQ(r->algo, ChecksumAlgo::kCrc32XorInt64);
  EXPECT_TRUE(r->Validate().ok());
}

TEST(DataIntegrityConfig, RoundTripsThroughJson) {
  DataIntegrityConfig c;
  c.enable_meta_checksum = true;
  c.algo = ChecksumAlgo::kCrc64Full;
  Result<DataIntegrityConfig> back = DataIntegrityConfig::FromJson(c.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, c);
  EXPECT_EQ(c.ToJson()["algo"], "crc64_full");
}

TEST(DataIntegrityConfig, WrongTypesFailNamingTheField) {
  struct Case {
    json j;
    std::string field;
  } cases[] = {
      {{{"enable_meta_checksum", "true"}}, "integrity.enable_meta_checksum"},
      {{{"enable_inline_header", 1}}, "integrity.enable_inline_header"},
      {{{"inline_header_version", "0"}}, "integrity.inline_header_version"},
      {{{"inline_header_version", 1.5}}, "integrity.inline_header_version"},
      {{{"algo", 1}}, "integrity.algo"},
      {{{"algo", "md5"}}, "integrity.algo"},
      {{{"enable_meta_chksum", true}}, "integrity.enable_meta_chksum"},
  };
  for (const Case& c : cases) {
    Status s = ParseError(c.j);
    ASSERT_EQ(s.code(), StatusCode::kInvalidConfig) << c.j.dump();
    EXPECT_NE(s.message().find("storage 'nfs'." + c.field), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(ParseError(json::array()).code(), StatusCode::kInvalidConfig) << "integrity must be an object";
}

TEST(DataIntegrityConfig, ValidateRejectsTheSeedsCases) {
  // The switch without a version (plan B needs one), or with a version this build does not write.
  DataIntegrityConfig inline_header;
  inline_header.enable_inline_header = true;
  Status s = inline_header.Validate("storage 'a'.integrity");
  EXPECT_EQ(s.code(), StatusCode::kInlineHeaderInvalid);
  EXPECT_NE(s.message().find("storage 'a'.integrity.enable_inline_header"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("without a version"), std::string::npos) << s.ToString();
  inline_header.inline_header_version = 2;
  s = inline_header.Validate("storage 'a'.integrity");
  EXPECT_EQ(s.code(), StatusCode::kInlineHeaderInvalid);
  EXPECT_NE(s.message().find("storage 'a'.integrity.inline_header_version: 2"), std::string::npos) << s.ToString();
  inline_header.inline_header_version = -1;
  EXPECT_EQ(inline_header.Validate().code(), StatusCode::kInlineHeaderInvalid);
  // Switch and version together are plan B, which is implemented now.
  inline_header.inline_header_version = 1;
  EXPECT_TRUE(inline_header.Validate().ok()) << inline_header.Validate().ToString();

  DataIntegrityConfig orphan;
  orphan.inline_header_version = 2;
  s = orphan.Validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidConfig);
  EXPECT_NE(s.message().find("integrity.inline_header_version"), std::string::npos) << s.ToString();

  DataIntegrityConfig no_algo;
  no_algo.enable_meta_checksum = true;
  no_algo.algo = ChecksumAlgo::kUnspecified;
  s = no_algo.Validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidConfig);
  EXPECT_NE(s.message().find("integrity.algo"), std::string::npos) << s.ToString();

  // Unspecified is fine while meta checksums are off.
  no_algo.enable_meta_checksum = false;
  EXPECT_TRUE(no_algo.Validate().ok());
}

TEST(DataIntegrityConfig, ExplicitUnspecifiedAlgoParsesThenFailsValidation) {
  Result<DataIntegrityConfig> r =
      DataIntegrityConfig::FromJson(json{{"enable_meta_checksum", true}, {"algo", "unspecified"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Validate().code(), StatusCode::kInvalidConfig);
}

}  // namespace
}  // namespace kvchaos::integrity
