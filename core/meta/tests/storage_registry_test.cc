// StorageConfig parsing (integrity problems fail the whole parse) and the registry's validation on
// add and on recovery (an invalid persisted entry is skipped and counted, never loaded).
#include "core/meta/storage_registry.h"

#include <gtest/gtest.h>

#include "core/meta/local_meta_indexer.h"

namespace kvchaos::meta {
namespace {

using nlohmann::json;

json Valid(const std::string& name) {
  return json{{"type", "posix"},
              {"global_unique_name", name},
              {"storage_spec", {{"root_path", "/tmp/x"}}},
              {"integrity", {{"enable_meta_checksum", true}, {"algo", "crc64_full"}}}};
}

TEST(StorageConfig, ParsesAndRoundTrips) {
  Result<StorageConfig> c = StorageConfig::FromJson(Valid("nfs"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->integrity.enable_meta_checksum);
  EXPECT_EQ(c->integrity.algo, integrity::ChecksumAlgo::kCrc64Full);
  EXPECT_TRUE(c->Validate().ok());
  Result<StorageConfig> back = StorageConfig::FromJsonString(c->ToJson().dump());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, *c);
}

TEST(StorageConfig, WithoutIntegrityEverythingIsOff) {
  json j = Valid("nfs");
  j.erase("integrity");
  Result<StorageConfig> c = StorageConfig::FromJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->integrity.enable_meta_checksum);
}

TEST(StorageConfig, IllTypedIntegrityFailsTheWholeParse) {
  json j = Valid("nfs");
  j["integrity"]["enable_meta_checksum"] = "yes";
  Result<StorageConfig> c = StorageConfig::FromJson(j);
  ASSERT_FALSE(c.ok()) << "must not fall back to 'integrity off'";
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidConfig);
  EXPECT_NE(c.status().message().find("storage 'nfs'.integrity.enable_meta_checksum"), std::string::npos)
      << c.status().ToString();
  j = Valid("nfs");
  j["integrity"] = "on";
  EXPECT_FALSE(StorageConfig::FromJson(j).ok());
  j = Valid("nfs");
  j["colour"] = 1;
  EXPECT_FALSE(StorageConfig::FromJson(j).ok()) << "unknown fields are rejected";
  EXPECT_FALSE(StorageConfig::FromJsonString("{not json").ok());
}

TEST(StorageRegistry, AddValidatesAndRejectsInlineHeader) {
  LocalMetaIndexer idx;
  StorageRegistry reg(idx);
  StorageConfig c = *StorageConfig::FromJson(Valid("nfs"));
  ASSERT_TRUE(reg.AddStorage(c, 1).ok());
  EXPECT_TRUE(reg.AddStorage(c, 1).ok()) << "re-adding the same config is a no-op";

  StorageConfig other = c;
  other.type = "other";
  EXPECT_EQ(reg.AddStorage(other, 1).code(), StatusCode::kAlreadyExists);

  StorageConfig inline_header = *StorageConfig::FromJson(Valid("nfs2"));
  inline_header.integrity.enable_inline_header = true;  // without a version
  Status s = reg.AddStorage(inline_header, 1);
  EXPECT_EQ(s.code(), StatusCode::kInlineHeaderInvalid) << s.ToString();
  EXPECT_FALSE(reg.Get("nfs2").has_value());
  std::vector<std::string> key{"storage:nfs2"};
  EXPECT_FALSE((*idx.Get(key))[0].has_value()) << "a rejected config must not be persisted";
}

TEST(StorageRegistry, RecoverSkipsAndCountsInvalidEntries) {
  LocalMetaIndexer idx;
  {
    StorageRegistry writer(idx);
    ASSERT_TRUE(writer.AddStorage(*StorageConfig::FromJson(Valid("good")), 1).ok());
  }
  // Entries that slipped in behind the registry's back.
  json inline_header = Valid("inline");
  inline_header["integrity"]["enable_inline_header"] = true;
  json orphan = Valid("orphan");
  orphan["integrity"]["inline_header_version"] = 2;
  std::vector<MetaWrite> bad{{"storage:inline", {{"config", inline_header.dump()}}},
                             {"storage:orphan", {{"config", orphan.dump()}}},
                             {"storage:garbage", {{"config", "{"}}},
                             {"storage:misnamed", {{"config", Valid("other").dump()}}},
                             {"storage:nofield", {{"x", "y"}}}};
  ASSERT_TRUE(idx.Put(1, bad).ok());

  StorageRegistry reg(idx);
  Result<size_t> loaded = reg.Recover();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(*loaded, 1u);
  EXPECT_EQ(reg.recover_error_count(), 5u);
  EXPECT_TRUE(reg.Get("good").has_value());
  EXPECT_FALSE(reg.Get("inline").has_value()) << "an inline-header config must never be loaded";
  EXPECT_FALSE(reg.Get("orphan").has_value());
}

}  // namespace
}  // namespace kvchaos::meta
