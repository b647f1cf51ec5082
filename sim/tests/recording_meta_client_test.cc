// RecordingMetaClient: every call through it is one record per key with the answer as the caller
// got it, and the outcome its status gives (an error that may have applied is "unknown"); a
// history recorded over the real CacheManager checks linearizable.
#include "sim/recording_meta_client.h"

#include <gtest/gtest.h>

#include "core/meta/cache_manager.h"
#include "core/meta/local_meta_indexer.h"
#include "core/meta/storage_registry.h"
#include "sim/linearizability.h"

namespace kvchaos::sim {
namespace {

// A meta client whose writes all answer `status`.
class AnsweringMetaClient final : public client::MetaClient {
 public:
  explicit AnsweringMetaClient(Status status) : status_(std::move(status)) {}
  Result<meta::StorageConfig> GetStorageConfig(const std::string&) override { return status_; }
  Result<meta::WriteSession> StartWrite(std::span<const std::string>, const std::string&) override { return status_; }
  Status FinishWrite(const std::string&, std::span<const std::string>, std::span<const int64_t>,
                     std::span<const uint8_t>, std::span<const meta::IovLayout>, int64_t) override {
    return status_;
  }
  Result<std::vector<std::optional<meta::CacheLocation>>> GetLocations(std::span<const std::string>) override {
    return status_;
  }
  Status Remove(std::span<const std::string>) override { return status_; }

 private:
  Status status_;
};

TEST(RecordingMetaClientTest, RecordsEveryKeyOfTheRealServiceAndChecksLinearizable) {
  meta::LocalMetaIndexer indexer;
  meta::StorageRegistry registry(indexer);
  meta::StorageConfig storage;
  storage.type = "posix";
  storage.global_unique_name = "s1";
  storage.integrity.enable_meta_checksum = true;
  storage.integrity.algo = integrity::ChecksumAlgo::kCrc64Full;
  ASSERT_TRUE(registry.AddStorage(storage, 0).ok());
  meta::CacheManager manager(indexer, registry);
  client::InProcessMetaClient inner(manager, registry);
  int64_t now = 0;
  HistoryRecorder recorder(Runtime::Real(), [&now] { return now += 10; });
  std::string caller = "writer";
  RecordingMetaClient meta(inner, recorder, [&caller] { return caller; });

  const std::vector<std::string> keys = {"a", "b"};
  Result<meta::WriteSession> session = meta.StartWrite(keys, "s1");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const std::vector<int64_t> checksums = {11, 0};  // 0 is a checksum too
  ASSERT_TRUE(meta.FinishWrite(session->session_id, keys, checksums, {}).ok());
  caller = "reader";
  ASSERT_TRUE(meta.GetLocations(keys).ok());
  const Status refused = meta.FinishWrite("ws-9-9", std::vector<std::string>{"c"}, {}, {});
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(meta.Remove(std::vector<std::string>{"a"}).ok());
  ASSERT_TRUE(meta.GetLocations(keys).ok());

  const std::vector<HistoryRecord> h = recorder.Records();
  ASSERT_EQ(h.size(), 10u) << "one record per key of each call";
  EXPECT_EQ(h[0].op, HistoryOp::kStartWrite);
  EXPECT_EQ(h[0].client, "writer");
  EXPECT_EQ(h[0].session, session->session_id);
  EXPECT_EQ(h[0].storage, "s1");
  EXPECT_EQ(h[0].location, meta::CacheManager::BlockIdHexForKey("a"));
  EXPECT_EQ(h[2].checksum, std::optional<int64_t>(11));
  EXPECT_EQ(h[3].checksum, std::optional<int64_t>(0));
  EXPECT_EQ(h[4].client, "reader");
  EXPECT_TRUE(h[4].found);
  EXPECT_EQ(h[4].checksum, std::optional<int64_t>(11));
  EXPECT_LT(h[0].invoke_ns, h[0].complete_ns);
  EXPECT_EQ(h[6].outcome, HistoryOutcome::kFailed) << "a refused finish is a definite answer: " << DescribeOp(h[6]);
  EXPECT_FALSE(h[8].found) << "removed";
  EXPECT_TRUE(h[9].found);

  const HistoryCheck check = CheckHistory(h);
  EXPECT_EQ(check.Verdict(), "linearizable") << check.FirstAnomaly();
  EXPECT_EQ(check.keys, 3u);
}

TEST(RecordingMetaClientTest, ErrorsThatMayHaveAppliedAreUnknown) {
  struct Case {
    Status status;
    HistoryOutcome write;
  };
  const std::vector<Case> cases = {
      {Status::Timeout("no answer"), HistoryOutcome::kUnknown},
      {Status::Unavailable("no leader answered"), HistoryOutcome::kUnknown},
      {Status::NotLeader("node 2 does not lead"), HistoryOutcome::kUnknown},
      {Status::Internal("index write failed"), HistoryOutcome::kUnknown},
      {Status::InvalidArgument("empty key"), HistoryOutcome::kFailed},
      {Status::NotFound("storage 'x' is not registered"), HistoryOutcome::kFailed},
  };
  for (const Case& c : cases) {
    AnsweringMetaClient inner(c.status);
    HistoryRecorder recorder(Runtime::Real());
    RecordingMetaClient meta(inner, recorder);
    const std::vector<std::string> keys = {"k"};
    (void)meta.StartWrite(keys, "s1");
    (void)meta.FinishWrite("ws-1-1", keys, {}, {});
    (void)meta.Remove(keys);
    (void)meta.GetLocations(keys);
    const std::vector<HistoryRecord> h = recorder.Records();
    ASSERT_EQ(h.size(), 4u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(h[i].outcome, c.write) << c.status.ToString() << ": " << DescribeOp(h[i]);
      EXPECT_NE(h[i].error.find(c.status.message()), std::string::npos) << h[i].error;
    }
    EXPECT_EQ(h[3].outcome, HistoryOutcome::kFailed) << "a read without an answer constrains nothing";
    EXPECT_EQ(h[0].client, "client");
  }
}

// A read answer that names its node and term: one location per key, served by "n2" in term 7.
class ServedReadMetaClient final : public client::MetaClient {
 public:
  Result<meta::StorageConfig> GetStorageConfig(const std::string&) override { return Status::NotFound("none"); }
  Result<meta::WriteSession> StartWrite(std::span<const std::string>, const std::string&) override {
    return Status::NotFound("none");
  }
  Status FinishWrite(const std::string&, std::span<const std::string>, std::span<const int64_t>,
                     std::span<const uint8_t>, std::span<const meta::IovLayout>, int64_t) override {
    return Status::NotFound("none");
  }
  Result<std::vector<std::optional<meta::CacheLocation>>> GetLocations(std::span<const std::string> keys) override {
    return std::vector<std::optional<meta::CacheLocation>>(keys.size());
  }
  Result<client::LocationsRead> ReadLocations(std::span<const std::string> keys) override {
    return client::LocationsRead{std::vector<std::optional<meta::CacheLocation>>(keys.size()), "n2", 7};
  }
  Status Remove(std::span<const std::string>) override { return Status::NotFound("none"); }
};

TEST(RecordingMetaClientTest, AReadRecordsTheNodeAndTermThatServedIt) {
  ServedReadMetaClient inner;
  HistoryRecorder recorder(Runtime::Real());
  RecordingMetaClient meta(inner, recorder);
  const std::vector<std::string> keys = {"a", "b"};
  auto locations = meta.GetLocations(keys);
  ASSERT_TRUE(locations.ok());
  EXPECT_EQ(locations->size(), 2u);
  const std::vector<HistoryRecord> h = recorder.Records();
  ASSERT_EQ(h.size(), 2u) << "one record per key";
  for (const HistoryRecord& r : h) {
    EXPECT_EQ(r.node, "n2") << DescribeOp(r);
    EXPECT_EQ(r.term, 7) << DescribeOp(r);
    EXPECT_NE(DescribeOp(r).find("-> none (ok, served by n2 in term 7)"), std::string::npos) << DescribeOp(r);
  }
}

}  // namespace
}  // namespace kvchaos::sim
