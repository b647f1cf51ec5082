// Both meta indexers behave alike: record round trip, listing by prefix, deletes, and the fencing
// check (older token rejected with nothing changed). Redis tests run against a real redis-server
// started on a free loopback port; the local file indexer must survive a reopen.
#include "core/meta/meta_indexer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>

#include "core/common/redis_ask.h"
#include "core/meta/local_meta_indexer.h"
#include "core/meta/redis_meta_indexer.h"
#include "testing/redis_sentinel_cluster.h"
#include "testing/redis_server.h"
#include "testing/temp_dir.h"

namespace kvchaos::meta {
namespace {

using kvchaos::testing::RedisServer;
using kvchaos::testing::TempDir;

// One backend under test: owns whatever it needs (a temp dir, a redis-server).
struct Backend {
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<RedisServer> redis;
  std::unique_ptr<MetaIndexer> indexer;
  std::string uri;
};

enum class Kind { kMemory, kLocalFile, kRedis };

std::string KindName(Kind k) { return k == Kind::kMemory ? "memory" : k == Kind::kLocalFile ? "local_file" : "redis"; }

class MetaIndexerTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    switch (GetParam()) {
      case Kind::kMemory:
        b_.uri = "memory://";
        break;
      case Kind::kLocalFile:
        b_.dir = std::make_unique<TempDir>("kvchaos-meta");
        b_.uri = "local://" + b_.dir->str() + "/meta.json";
        break;
      case Kind::kRedis:
        b_.redis = RedisServer::Start();
        if (!b_.redis) GTEST_SKIP() << RedisServer::SkipReason();
        b_.uri = b_.redis->uri() + "/?prefix=t_";
        break;
    }
    Result<std::unique_ptr<MetaIndexer>> opened = OpenMetaIndexer(b_.uri);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    b_.indexer = std::move(*opened);
  }
  MetaIndexer& idx() { return *b_.indexer; }

  Backend b_;
};

std::vector<std::optional<MetaRecord>> GetAll(MetaIndexer& idx, std::vector<std::string> keys) {
  Result<std::vector<std::optional<MetaRecord>>> r = idx.Get(keys);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<std::optional<MetaRecord>>{};
}

TEST_P(MetaIndexerTest, PutGetListDelete) {
  std::vector<MetaWrite> writes{{"cache:a", {{"locations", "[1]"}, {"x", "y"}}},
                                {"cache:b", {{"locations", "[2]"}}},
                                {"storage:s", {{"config", "{}"}}}};
  ASSERT_TRUE(idx().Put(1, writes).ok());
  auto got = GetAll(idx(), {"cache:a", "cache:zz", "cache:b"});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], writes[0].record);
  EXPECT_FALSE(got[1].has_value()) << "a missing key reads as nullopt";
  EXPECT_EQ(got[2], writes[1].record);

  Result<std::vector<std::string>> keys = idx().ListKeys("cache:");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(*keys, (std::vector<std::string>{"cache:a", "cache:b"}));

  // Put replaces the whole record.
  std::vector<MetaWrite> replace{{"cache:a", {{"locations", "[3]"}}}};
  ASSERT_TRUE(idx().Put(1, replace).ok());
  EXPECT_EQ(GetAll(idx(), {"cache:a"})[0], replace[0].record);

  std::vector<std::string> del{"cache:a", "cache:never"};
  ASSERT_TRUE(idx().Delete(1, del).ok());
  EXPECT_FALSE(GetAll(idx(), {"cache:a"})[0].has_value());
  EXPECT_TRUE(GetAll(idx(), {"cache:b"})[0].has_value());
}

TEST_P(MetaIndexerTest, RejectsWritesWithAnOlderFencingTokenAndChangesNothing) {
  std::vector<MetaWrite> v1{{"k", {{"f", "leader5"}}}};
  ASSERT_TRUE(idx().Put(5, v1).ok());
  EXPECT_EQ(*idx().NewestFencingToken(), 5u);

  std::vector<MetaWrite> stale{{"k", {{"f", "old-leader"}}}, {"k2", {{"f", "old-leader"}}}};
  Status s = idx().Put(4, stale);
  EXPECT_EQ(s.code(), StatusCode::kStaleFencingToken) << s.ToString();
  EXPECT_NE(s.message().find("4"), std::string::npos) << s.ToString();
  std::vector<std::string> k{"k"};
  EXPECT_EQ(idx().Delete(3, k).code(), StatusCode::kStaleFencingToken);
  auto got = GetAll(idx(), {"k", "k2"});
  EXPECT_EQ(got[0], v1[0].record) << "a stale write must not change the record";
  EXPECT_FALSE(got[1].has_value()) << "a stale write must not create records";

  // The same token again is the same leader; a newer one wins and becomes the newest.
  ASSERT_TRUE(idx().Put(5, v1).ok());
  std::vector<MetaWrite> v7{{"k", {{"f", "leader7"}}}};
  ASSERT_TRUE(idx().Put(7, v7).ok());
  EXPECT_EQ(*idx().NewestFencingToken(), 7u);
  EXPECT_EQ(idx().Put(5, v1).code(), StatusCode::kStaleFencingToken);
  EXPECT_EQ(GetAll(idx(), {"k"})[0], v7[0].record);
}

TEST_P(MetaIndexerTest, TokensAboveTwoToTheFiftyThreeCompareExactly) {
  const uint64_t big = (uint64_t{1} << 60) + 1;
  std::vector<MetaWrite> w{{"k", {{"f", "v"}}}};
  ASSERT_TRUE(idx().Put(big, w).ok());
  EXPECT_EQ(idx().Put(big - 1, w).code(), StatusCode::kStaleFencingToken) << "off by one above 2^53 must be seen";
  EXPECT_EQ(*idx().NewestFencingToken(), big);
}

TEST_P(MetaIndexerTest, RaiseFenceMovesTheFenceWithoutWritingAndRefusesOlderTokens) {
  std::vector<MetaWrite> w3{{"k", {{"f", "leader3"}}}};
  ASSERT_TRUE(idx().Put(3, w3).ok());
  Status same = idx().RaiseFence(3);
  EXPECT_TRUE(same.ok()) << "raising to the newest token is fine: " << same.ToString();
  // A new leader (token 8) fences before it writes anything: the old leader is refused at once.
  Status raised = idx().RaiseFence(8);
  ASSERT_TRUE(raised.ok()) << raised.ToString();
  EXPECT_EQ(*idx().NewestFencingToken(), 8u);
  EXPECT_EQ(GetAll(idx(), {"k"})[0], w3[0].record) << "raising the fence must not touch records";
  EXPECT_EQ(*idx().ListKeys(""), (std::vector<std::string>{"k"})) << "raising the fence must not create records";
  std::vector<MetaWrite> zombie{{"k", {{"f", "zombie7"}}}};
  EXPECT_EQ(idx().Put(7, zombie).code(), StatusCode::kStaleFencingToken) << "an older term wrote after the raise";
  std::vector<std::string> k{"k"};
  EXPECT_EQ(idx().Delete(3, k).code(), StatusCode::kStaleFencingToken);
  EXPECT_EQ(GetAll(idx(), {"k"})[0], w3[0].record);

  Status lower = idx().RaiseFence(6);
  EXPECT_EQ(lower.code(), StatusCode::kStaleFencingToken) << "the fence must never move back: " << lower.ToString();
  EXPECT_NE(lower.message().find("6"), std::string::npos) << lower.ToString();
  EXPECT_EQ(*idx().NewestFencingToken(), 8u);
  std::vector<MetaWrite> w8{{"k", {{"f", "leader8"}}}};
  EXPECT_TRUE(idx().Put(8, w8).ok()) << "the leader that raised the fence must be able to write";

  const uint64_t big = (uint64_t{1} << 60) + 1;
  ASSERT_TRUE(idx().RaiseFence(big).ok());
  EXPECT_EQ(idx().RaiseFence(big - 1).code(), StatusCode::kStaleFencingToken) << "off by one above 2^53 must be seen";
  EXPECT_EQ(*idx().NewestFencingToken(), big);
}

TEST_P(MetaIndexerTest, LargeBatchesRoundTrip) {
  std::vector<MetaWrite> writes;
  std::vector<std::string> keys;
  for (int i = 0; i < 700; ++i) {  // several Redis script batches
    writes.push_back({"cache:" + std::to_string(i), {{"locations", std::to_string(i * 3)}}});
    keys.push_back(writes.back().key);
  }
  ASSERT_TRUE(idx().Put(2, writes).ok());
  auto got = GetAll(idx(), keys);
  ASSERT_EQ(got.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(got[i], writes[i].record) << keys[i];
  Result<std::vector<std::string>> listed = idx().ListKeys("cache:");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(*listed, sorted) << "ListKeys must answer every key of the prefix once, in key order, whatever the "
                                "indexer stores them in";
  ASSERT_TRUE(idx().Delete(2, keys).ok());
  EXPECT_TRUE(idx().ListKeys("cache:")->empty());
}

TEST_P(MetaIndexerTest, EmptyRecordIsRejected) {
  std::vector<MetaWrite> w{{"k", {}}};
  EXPECT_EQ(idx().Put(1, w).code(), StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Backends, MetaIndexerTest, ::testing::Values(Kind::kMemory, Kind::kLocalFile, Kind::kRedis),
                         [](const auto& param_info) { return KindName(param_info.param); });

TEST(LocalMetaIndexer, ReopenRecoversRecordsAndTheFencingToken) {
  TempDir dir("kvchaos-meta");
  const std::string path = dir.str() + "/meta.json";
  {
    auto idx = LocalMetaIndexer::Open(path);
    ASSERT_TRUE(idx.ok()) << idx.status().ToString();
    std::vector<MetaWrite> w{{"cache:a", {{"locations", "x"}}}};
    ASSERT_TRUE((*idx)->Put(9, w).ok());
  }
  auto idx = LocalMetaIndexer::Open(path);
  ASSERT_TRUE(idx.ok()) << idx.status().ToString();
  std::vector<std::string> keys{"cache:a"};
  EXPECT_EQ((*(*idx)->Get(keys))[0], (MetaRecord{{"locations", "x"}}));
  EXPECT_EQ(*(*idx)->NewestFencingToken(), 9u) << "a restart must not forget the newest token";
  std::vector<MetaWrite> stale{{"cache:a", {{"locations", "old"}}}};
  EXPECT_EQ((*idx)->Put(8, stale).code(), StatusCode::kStaleFencingToken);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp")) << "no temp file may be left behind";
}

TEST(LocalMetaIndexer, ARaisedFenceSurvivesAReopen) {
  TempDir dir("kvchaos-meta");
  const std::string path = dir.str() + "/meta.json";
  {
    auto idx = LocalMetaIndexer::Open(path);
    ASSERT_TRUE(idx.ok()) << idx.status().ToString();
    ASSERT_TRUE((*idx)->RaiseFence(12).ok());
  }
  auto idx = LocalMetaIndexer::Open(path);
  ASSERT_TRUE(idx.ok()) << idx.status().ToString();
  EXPECT_EQ(*(*idx)->NewestFencingToken(), 12u) << "a restart forgot the raised fence";
  std::vector<MetaWrite> stale{{"k", {{"f", "old"}}}};
  EXPECT_EQ((*idx)->Put(11, stale).code(), StatusCode::kStaleFencingToken);
}

TEST(LocalMetaIndexer, ACorruptFileIsAnErrorNotAnEmptyIndex) {
  TempDir dir("kvchaos-meta");
  const std::string path = dir.str() + "/meta.json";
  std::ofstream(path) << "{\"version\": 1, \"records\": ";
  auto idx = LocalMetaIndexer::Open(path);
  ASSERT_FALSE(idx.ok());
  EXPECT_NE(idx.status().message().find(path), std::string::npos) << idx.status().ToString();
}

TEST(LocalMetaIndexer, FailedSaveChangesNothing) {
  TempDir dir("kvchaos-meta");
  const std::string sub = dir.str() + "/sub";
  std::filesystem::create_directory(sub);
  auto idx = LocalMetaIndexer::Open(sub + "/meta.json");
  ASSERT_TRUE(idx.ok());
  std::vector<MetaWrite> w{{"k", {{"f", "1"}}}};
  ASSERT_TRUE((*idx)->Put(1, w).ok());
  std::filesystem::remove_all(sub);  // the next save cannot create its temp file
  std::vector<MetaWrite> w2{{"k", {{"f", "2"}}}};
  Status s = (*idx)->Put(2, w2);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  std::vector<std::string> keys{"k"};
  EXPECT_EQ((*(*idx)->Get(keys))[0], (MetaRecord{{"f", "1"}}));
  EXPECT_EQ(*(*idx)->NewestFencingToken(), 1u);
}

TEST(RedisMetaIndexer, SurvivesARedisRestartThatDropsTheScriptCache) {
  auto redis = RedisServer::Start();
  if (!redis) GTEST_SKIP() << RedisServer::SkipReason();
  auto idx = OpenMetaIndexer(redis->uri());
  ASSERT_TRUE(idx.ok()) << idx.status().ToString();
  std::vector<MetaWrite> w{{"k", {{"f", "1"}}}};
  ASSERT_TRUE((*idx)->Put(1, w).ok());
  redis->Restart();  // no persistence: data, fence and scripts are gone
  Status s = (*idx)->Put(1, w);
  ASSERT_TRUE(s.ok()) << "reconnect + NOSCRIPT reload must be transparent: " << s.ToString();
  std::vector<std::string> keys{"k"};
  EXPECT_EQ((*(*idx)->Get(keys))[0], (MetaRecord{{"f", "1"}}));
}

TEST(RedisMetaIndexer, AFenceRaisedByOneNodeStopsAnotherAndSurvivesAScriptCacheLoss) {
  auto redis = RedisServer::Start();
  if (!redis) GTEST_SKIP() << RedisServer::SkipReason();
  auto zombie = OpenMetaIndexer(redis->uri());
  auto leader = OpenMetaIndexer(redis->uri());
  ASSERT_TRUE(zombie.ok() && leader.ok());
  std::vector<MetaWrite> w{{"k", {{"f", "zombie"}}}};
  ASSERT_TRUE((*zombie)->Put(4, w).ok());
  ASSERT_TRUE((*leader)->RaiseFence(5).ok());
  EXPECT_EQ((*zombie)->Put(4, w).code(), StatusCode::kStaleFencingToken)
      << "the old term wrote after the new leader raised the fence through another connection";
  redis->Restart();  // scripts (and, without persistence, the fence) are gone
  Status again = (*leader)->RaiseFence(6);
  ASSERT_TRUE(again.ok()) << "the fence script must be reloaded after NOSCRIPT: " << again.ToString();
  EXPECT_EQ(*(*zombie)->NewestFencingToken(), 6u);
}

TEST(RedisMetaIndexer, UnreachableServerIsUnavailable) {
  auto idx = OpenMetaIndexer("redis://127.0.0.1:1/?timeout_ms=200&retry_count=0");
  ASSERT_FALSE(idx.ok());
  EXPECT_EQ(idx.status().code(), StatusCode::kUnavailable) << idx.status().ToString();
}

TEST(OpenMetaIndexer, BadUrisNameTheWrongPart) {
  struct Case {
    const char* uri;
    const char* part;
  } cases[] = {
      {"ftp://x", "scheme"},
      {"local://relative/path", "path"},
      {"redis://host", "host:port"},
      {"redis://:6379", "host"},
      {"redis://h:port", "port"},
      {"redis://h:70000", "port"},
      {"redis://h:6379/?db=x", "db"},
      {"redis://h:6379/?timeout_ms=0", "timeout_ms"},
      {"redis://h:6379/?colour=red", "colour"},
      {"redis://h:6379/?db", "query"},
      {"redis://h:6379/?fence_replicas=-1", "fence_replicas"},
      {"redis://h:6379/?timeout_ms=500&fence_replicas=1&fence_wait_ms=500", "fence_wait_ms"},
  };
  for (const Case& c : cases) {
    auto r = OpenMetaIndexer(c.uri);
    ASSERT_FALSE(r.ok()) << c.uri;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidConfig) << c.uri << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.part), std::string::npos) << c.uri << ": " << r.status().ToString();
  }
}

TEST(RedisIndexerOptions, ParsesEveryPart) {
  auto o = RedisIndexerOptions::FromUri("redis://secret@10.0.0.1:7000/1?db=3&timeout_ms=250&retry_count=5&prefix=p_");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->password, "secret");
  EXPECT_EQ(o->host, "10.0.0.1");
  EXPECT_EQ(o->port, 7000);
  EXPECT_EQ(o->db, 3) << "the db comes only from the query parameter";
  EXPECT_EQ(o->timeout_ms, 250);
  EXPECT_EQ(o->retry_count, 5);
  EXPECT_EQ(o->prefix, "p_");
  EXPECT_EQ(o->fence_replicas, 0) << "no replica is waited for unless asked";
  EXPECT_EQ(o->fence_wait_ms, 125) << "the fence's WAIT defaults to half the timeout";
  auto waited = RedisIndexerOptions::FromUri("redis://h:1/?fence_replicas=1&fence_wait_ms=300");
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  EXPECT_EQ(waited->fence_replicas, 1);
  EXPECT_EQ(waited->fence_wait_ms, 300);
  EXPECT_TRUE(RedisIndexerOptions::FromUri("redis://h:1/?timeout_ms=1").ok())
      << "the fence's wait is checked against the timeout only when a replica is waited for";
}

// A meta index on a Sentinel group's primary (redis:// at it): asynchronous replication lets a
// failover take the fence back, so a deposed leader's older token is accepted again. With
// fence_replicas=1 a fence that did not reach the replica is refused, so no term serves on it.
TEST(RedisMetaIndexer, AFenceALaggingFailoverCouldTakeBackIsRefusedWithFenceReplicas) {
  auto cluster = kvchaos::testing::RedisSentinelCluster::Start();
  if (!cluster) GTEST_SKIP() << kvchaos::testing::RedisSentinelCluster::SkipReason();
  const std::string primary = "redis://127.0.0.1:" + std::to_string(cluster->server_port(0));
  auto plain = OpenMetaIndexer(primary);
  auto waiting = OpenMetaIndexer(primary + "/?fence_replicas=1&fence_wait_ms=300");
  ASSERT_TRUE(plain.ok() && waiting.ok());
  ASSERT_TRUE((*waiting)->RaiseFence(5).ok()) << "with the replica connected WAIT sees it take the fence";
  RedisReply on_replica = RedisAsk(cluster->server_port(1), {"GET", "kvchaos_fence"});
  ASSERT_NE(on_replica, nullptr);
  EXPECT_EQ(RedisReplyText(on_replica.get()), "5") << "a fence raised with fence_replicas=1 is on the replica when it returns";

  cluster->CutReplication();
  EXPECT_TRUE((*plain)->RaiseFence(10).ok()) << "without fence_replicas the fence is taken by the primary alone";
  const Status refused = (*waiting)->RaiseFence(11);
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable) << refused.ToString();
  EXPECT_NE(refused.message().find("reached 0 of 1 replica(s)"), std::string::npos) << refused.ToString();

  cluster->KillServer(0);
  ASSERT_TRUE(cluster->WaitForPrimary(1, std::chrono::seconds(15))) << "the sentinels did not promote the replica";
  auto promoted = OpenMetaIndexer("redis://127.0.0.1:" + std::to_string(cluster->server_port(1)));
  ASSERT_TRUE(promoted.ok()) << promoted.status().ToString();
  auto newest = (*promoted)->NewestFencingToken();
  ASSERT_TRUE(newest.ok());
  EXPECT_EQ(*newest, 5u) << "the promoted replica has the last fence that reached it: the plain fence at 10 is gone";
  const std::vector<MetaWrite> stale{{"cache:k", {{"locations", "[1]"}}}};
  EXPECT_TRUE((*promoted)->Put(7, stale).ok())
      << "the gap fence_replicas closes: token 7, older than the lost fence 10, is accepted";
  auto alone = OpenMetaIndexer("redis://127.0.0.1:" + std::to_string(cluster->server_port(1)) +
                               "/?fence_replicas=1&fence_wait_ms=200");
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ((*alone)->RaiseFence(12).code(), StatusCode::kUnavailable)
      << "with no replica left, a fence that must be replicated is refused";
}

}  // namespace
}  // namespace kvchaos::meta
