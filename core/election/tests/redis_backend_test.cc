// CoordinationRedisBackend against a real redis-server on a free loopback port: the lock contract,
// upstream key names, DB selection, NOSCRIPT reload, AUTH, SCAN-based listing, outages, lock calls
// that end by their deadline whatever the URI's timeout and retries, and two LeaderElectors
// handing over through it.
#include "core/election/coordination_redis_backend.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <atomic>
#include <thread>

#include "core/common/real_runtime.h"
#include "core/election/leader_elector.h"
#include "core/election/tests/elector_fixture.h"
#include "core/election/tests/coordination_contract.h"
#include "testing/free_port.h"
#include "testing/redis_server.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;
using kvchaos::testing::RedisServer;

// A raw hiredis connection to inspect what the backend wrote.
class Raw {
 public:
  explicit Raw(int port) : c_(redisConnect("127.0.0.1", port)) {}
  ~Raw() { redisFree(c_); }
  std::string Cmd(const std::vector<std::string>& argv) {
    std::vector<const char*> a;
    std::vector<size_t> l;
    for (auto& s : argv) a.push_back(s.c_str()), l.push_back(s.size());
    auto* r = static_cast<redisReply*>(redisCommandArgv(c_, static_cast<int>(a.size()), a.data(), l.data()));
    if (r == nullptr) return "<io error>";
    std::string out = r->type == REDIS_REPLY_NIL       ? "<nil>"
                      : r->type == REDIS_REPLY_INTEGER ? std::to_string(r->integer)
                      : r->str != nullptr              ? std::string(r->str, r->len)
                                                       : "<array>";
    freeReplyObject(r);
    return out;
  }

 private:
  redisContext* c_;
};

class RedisBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = RedisServer::Start();
    if (!redis_) GTEST_SKIP() << RedisServer::SkipReason();
  }
  std::unique_ptr<CoordinationRedisBackend> Make(const std::string& query = "", const std::string& auth = "") {
    auto uri = ParseCoordinationUri("redis://" + auth + "127.0.0.1:" + std::to_string(redis_->port()) + "/" + query);
    EXPECT_TRUE(uri.ok()) << uri.status().ToString();
    return std::make_unique<CoordinationRedisBackend>(Runtime::Real(), uri->redis);
  }
  std::unique_ptr<RedisServer> redis_;
};

TEST_F(RedisBackendTest, LockContractAndFencingTokens) {
  auto b = Make();
  ASSERT_TRUE(b->Init().ok());
  auto a = b->TryLock("L", "a", 10s, kNoDeadline);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->token, 1u);
  auto other = b->TryLock("L", "b", 10s, kNoDeadline);
  EXPECT_EQ(other.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(other.status().message().find("'a'"), std::string::npos) << other.status().message();
  EXPECT_EQ(b->RenewLock("L", "b", 10s, kNoDeadline).code(), StatusCode::kLockLost);
  EXPECT_EQ(b->Unlock("L", "b", kNoDeadline).code(), StatusCode::kLockLost);
  auto h = b->GetLockHolder("L", kNoDeadline);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->holder, "a");
  EXPECT_GT(h->remaining_ttl, 0ms);
  EXPECT_LE(h->remaining_ttl, 10s);
  EXPECT_EQ(h->token, 1u);
  EXPECT_EQ(b->TryLock("L", "a", 10s, kNoDeadline)->token, 2u) << "re-entry must grant a new token";
  ASSERT_TRUE(b->RenewLock("L", "a", 10s, kNoDeadline).ok());
  ASSERT_TRUE(b->Unlock("L", "a", kNoDeadline).ok());
  EXPECT_EQ(b->GetLockHolder("L", kNoDeadline)->holder, "");
  EXPECT_EQ(b->GetLockHolder("L", kNoDeadline)->token, 2u) << "token must survive Unlock";
  EXPECT_EQ(b->TryLock("L", "b", 10s, kNoDeadline)->token, 3u);

  ASSERT_TRUE(b->TryLock("E", "x", 50ms, kNoDeadline).ok());
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(b->GetLockHolder("E", kNoDeadline)->holder, "") << "lock outlived its lease on the server";
  EXPECT_EQ(b->RenewLock("E", "x", 50ms, kNoDeadline).code(), StatusCode::kLockLost) << "renewed an expired lock";
  EXPECT_EQ(b->TryLock("E", "y", 10s, kNoDeadline)->token, 2u);
}

TEST_F(RedisBackendTest, CoordinationContract) {
  auto b = Make();
  ASSERT_TRUE(b->Init().ok());
  testing::CheckCoordinationContract(*b, [](Duration d) { std::this_thread::sleep_for(d); });
  Raw raw(redis_->port());
  EXPECT_EQ(raw.Cmd({"GET", "kvcm_fence:F"}), std::to_string((FencingToken{1} << 53) + 4))
      << "the counter key must hold the raised token";
}

TEST_F(RedisBackendTest, AfterAnEmptyRestartTheHolderRaisesItsTokenPastTheFloor) {
  auto b = Make();
  ASSERT_TRUE(b->Init().ok());
  for (FencingToken want = 1; want <= 3; ++want) ASSERT_EQ(b->TryLock("L", "a", 10s, kNoDeadline)->token, want);
  redis_->Restart();  // no persistence: the lock and the counter are gone
  auto again = b->TryLock("L", "b", 10s, kNoDeadline);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->token, 1u) << "an empty Redis counts from 1 again";
  Raw raw(redis_->port());
  EXPECT_EQ(raw.Cmd({"SCRIPT", "FLUSH"}), "OK");  // the raise script must be reloaded as well
  EXPECT_EQ(b->RaiseTokenFloor("L", "a", 3, kNoDeadline).status().code(), StatusCode::kLockLost)
      << "the old holder raised";
  auto raised = b->RaiseTokenFloor("L", "b", 3, kNoDeadline);
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(*raised, 4u);
  EXPECT_EQ(b->GetLockHolder("L", kNoDeadline)->token, 4u);
  EXPECT_EQ(b->TryLock("L", "b", 10s, kNoDeadline)->token, 5u) << "grants go on above the raised token";
}

TEST_F(RedisBackendTest, UpstreamKeyNamesWithAndWithoutClusterName) {
  Raw raw(redis_->port());
  auto named = Make("?cluster_name=app");
  ASSERT_TRUE(named->TryLock(kLeaderLockKey, "node1", 10s, kNoDeadline).ok());
  EXPECT_EQ(raw.Cmd({"GET", "kvcm_app_lock:_TAIR_KVCM_LEADER_KEY"}), "node1");
  EXPECT_NE(raw.Cmd({"PTTL", "kvcm_app_lock:_TAIR_KVCM_LEADER_KEY"}), "-1") << "lock key without expiry";
  EXPECT_EQ(raw.Cmd({"GET", "kvcm_app_fence:_TAIR_KVCM_LEADER_KEY"}), "1");
  ASSERT_TRUE(named->SetValue("_TAIR_KVCM_NODE_INFO_node1", "{\"host\":\"h\"}").ok());
  EXPECT_EQ(raw.Cmd({"GET", "kvcm_app_kv:_TAIR_KVCM_NODE_INFO_node1"}), "{\"host\":\"h\"}");

  auto plain = Make();
  ASSERT_TRUE(plain->SetValue("k", "v").ok());
  EXPECT_EQ(raw.Cmd({"GET", "kvcm_kv:k"}), "v");
  // A lock taken by an upstream peer (plain SET NX PX) is respected.
  raw.Cmd({"SET", "kvcm_lock:" + std::string(kLeaderLockKey), "upstream-node", "PX", "10000"});
  auto g = plain->TryLock(kLeaderLockKey, "node1", 10s, kNoDeadline);
  EXPECT_EQ(g.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(plain->GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "upstream-node");
}

// Issue 18 §7: an upstream node takes the lock with a plain SET NX PX and no token; the token an
// earlier kvchaos term left is not its token.
TEST_F(RedisBackendTest, AHolderThatTookNoTokenHasNone) {
  Raw raw(redis_->port());
  auto b = Make("?cluster_name=mixed");
  ASSERT_EQ(b->TryLock(kLeaderLockKey, "kvchaos-1", 10s, kNoDeadline)->token, 1u);
  EXPECT_EQ(b->GetLockHolder(kLeaderLockKey, kNoDeadline)->token, 1u) << "a kvchaos holder's own token";
  ASSERT_TRUE(b->Unlock(kLeaderLockKey, "kvchaos-1", kNoDeadline).ok());
  EXPECT_EQ(b->GetLockHolder(kLeaderLockKey, kNoDeadline)->token, 1u) << "a free lock reports the newest token";
  raw.Cmd({"SET", "kvcm_mixed_lock:" + std::string(kLeaderLockKey), "upstream-1", "NX", "PX", "10000"});
  auto h = b->GetLockHolder(kLeaderLockKey, kNoDeadline);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->holder, "upstream-1");
  EXPECT_EQ(h->token, 0u) << "the upstream holder was reported with the earlier kvchaos term's token";
  raw.Cmd({"DEL", "kvcm_mixed_lock:" + std::string(kLeaderLockKey)});
  EXPECT_EQ(b->TryLock(kLeaderLockKey, "kvchaos-2", 10s, kNoDeadline)->token, 2u);
  EXPECT_EQ(b->GetLockHolder(kLeaderLockKey, kNoDeadline)->token, 2u);
}

// Upstream catalogue: the cluster name alone picks the key scope, whatever else the URIs say.
TEST_F(RedisBackendTest, TheSameClusterNameIsOneScopeAcrossDifferentUris) {
  auto a = Make("?cluster_name=app&timeout_ms=500&retry_count=0");
  auto b = Make("?retry_count=3&client_max_pool_size=8&cluster_name=app&timeout_ms=2000");
  auto other = Make("?cluster_name=app2");
  ASSERT_TRUE(a->TryLock(kLeaderLockKey, "n1", 10s, kNoDeadline).ok());
  EXPECT_EQ(b->GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "n1");
  EXPECT_EQ(b->TryLock(kLeaderLockKey, "n2", 10s, kNoDeadline).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(other->GetLockHolder(kLeaderLockKey, kNoDeadline)->holder, "") << "another cluster name shares the scope";
  ASSERT_TRUE(b->SetValue("k", "from-b").ok());
  EXPECT_EQ(*a->GetValue("k"), "from-b");
}

TEST_F(RedisBackendTest, DbComesFromTheQueryOnly) {
  Raw raw(redis_->port());
  auto b = Make("?db=3");
  ASSERT_TRUE(b->SetValue("k", "in-3").ok());
  EXPECT_EQ(raw.Cmd({"GET", "kvcm_kv:k"}), "<nil>") << "wrote to DB 0";
  raw.Cmd({"SELECT", "3"});
  EXPECT_EQ(raw.Cmd({"GET", "kvcm_kv:k"}), "in-3");
  auto path_db = Make("5?");  // "/5" is a path, not a DB
  ASSERT_TRUE(path_db->SetValue("p", "in-0").ok());
  raw.Cmd({"SELECT", "0"});
  EXPECT_EQ(raw.Cmd({"GET", "kvcm_kv:p"}), "in-0");
}

TEST_F(RedisBackendTest, ScriptsAreReloadedAfterNoscript) {
  Raw raw(redis_->port());
  auto b = Make();
  ASSERT_TRUE(b->TryLock("L", "a", 10s, kNoDeadline).ok());
  EXPECT_EQ(raw.Cmd({"SCRIPT", "FLUSH"}), "OK");
  EXPECT_TRUE(b->RenewLock("L", "a", 10s, kNoDeadline).ok()) << "NOSCRIPT was not handled";
  EXPECT_EQ(b->GetLockHolder("L", kNoDeadline)->holder, "a");
  raw.Cmd({"SCRIPT", "FLUSH"});
  EXPECT_EQ(b->TryLock("L", "a", 10s, kNoDeadline)->token, 2u);
  EXPECT_TRUE(b->Unlock("L", "a", kNoDeadline).ok());
}

// A reconnect (after an outage, every caller makes one) is a connect and the command: the scripts
// the server already has are not loaded again. A server that lost them gets them back on NOSCRIPT.
TEST_F(RedisBackendTest, AReconnectLoadsNoScriptTheServerHas) {
  Raw raw(redis_->port());
  auto b = Make();
  ASSERT_TRUE(b->TryLock("L", "a", 10s, kNoDeadline).ok());
  ASSERT_EQ(raw.Cmd({"CONFIG", "RESETSTAT"}), "OK");
  raw.Cmd({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});  // the backend's connection dies
  ASSERT_TRUE(b->RenewLock("L", "a", 10s, kNoDeadline).ok()) << "did not reconnect";
  const std::string stats = raw.Cmd({"INFO", "commandstats"});
  EXPECT_EQ(stats.find("cmdstat_script"), std::string::npos) << "scripts were loaded again: " << stats;
  EXPECT_NE(stats.find("cmdstat_evalsha"), std::string::npos) << stats;
}

TEST_F(RedisBackendTest, AuthIsSentAndRefusalsAreClear) {
  Raw raw(redis_->port());
  ASSERT_EQ(raw.Cmd({"CONFIG", "SET", "requirepass", "pw-123"}), "OK");
  auto none = Make();
  Status s = none->Init();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("SCRIPT LOAD"), std::string::npos) << s.ToString();
  auto wrong = Make("", "nope@");
  s = wrong->Init();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("AUTH refused"), std::string::npos) << s.ToString();
  auto right = Make("", "pw-123@");
  ASSERT_TRUE(right->Init().ok());
  EXPECT_TRUE(right->TryLock("L", "a", 10s, kNoDeadline).ok());
}

// Issue 18 §3: "user:pwd@" works against a requirepass server whose password is "user:pwd" (what
// upstream sends, one argument) and against an ACL user (AUTH user pwd); a server without a password
// takes an auth part as upstream does (it never sends AUTH there).
TEST_F(RedisBackendTest, AuthWorksWithARequirepassAndWithAnAclUser) {
  Raw raw(redis_->port());
  auto no_password = Make("", "ops:pw-1@");
  ASSERT_TRUE(no_password->Init().ok()) << "an auth part against a server without a password";

  ASSERT_EQ(raw.Cmd({"CONFIG", "SET", "requirepass", "ops:pw-1"}), "OK");
  ASSERT_EQ(raw.Cmd({"AUTH", "ops:pw-1"}), "OK");
  auto requirepass = Make("", "ops:pw-1@");
  Status s = requirepass->Init();
  ASSERT_TRUE(s.ok()) << "requirepass 'ops:pw-1': " << s.ToString();
  EXPECT_TRUE(requirepass->TryLock("L", "a", 10s, kNoDeadline).ok());

  ASSERT_EQ(raw.Cmd({"ACL", "SETUSER", "alice", "on", ">s3cret", "~*", "&*", "+@all"}), "OK");
  auto acl = Make("", "alice:s3cret@");
  s = acl->Init();
  ASSERT_TRUE(s.ok()) << "ACL user alice: " << s.ToString();
  EXPECT_EQ(acl->GetLockHolder("L", kNoDeadline)->holder, "a");
  EXPECT_NE(raw.Cmd({"CLIENT", "LIST", "USER", "alice"}), "") << "the backend is not connected as alice";

  auto wrong = Make("", "alice:wrong@");
  s = wrong->Init();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("AUTH refused"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("AUTH <user> <password>"), std::string::npos) << "forms tried not named: " << s.ToString();
  EXPECT_EQ(s.message().find("wrong"), std::string::npos) << "password leaked: " << s.ToString();
}

// Issue 18 §2: client_min_pool_size connections are opened by Init; at most client_max_pool_size
// stay open once the calls that needed more are done.
TEST_F(RedisBackendTest, PoolSizesBoundTheConnectionsKept) {
  auto b = Make("?client_min_pool_size=3&client_max_pool_size=3&timeout_ms=60000");
  ASSERT_TRUE(b->Init().ok());
  EXPECT_EQ(b->IdleConnections(), 3u);

  auto small = Make("?client_max_pool_size=1&timeout_ms=60000");
  ASSERT_TRUE(small->Init().ok());
  ASSERT_TRUE(small->SetValue("k", "v").ok());
  // Three calls at once while the server does not answer: each has a connection of its own.
  redis_->Pause();
  std::vector<std::thread> calls;
  for (int i = 0; i < 3; ++i) calls.emplace_back([&] { EXPECT_TRUE(small->GetValue("k").ok()); });
  // Wait (bounded) until all three are in flight, i.e. none is idle and two more were connected:
  // there is no hook, so give them time before the server answers again.
  for (int i = 0; i < 200 && small->IdleConnections() != 0; ++i) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(200ms);
  redis_->Resume();
  for (auto& t : calls) t.join();
  EXPECT_EQ(small->IdleConnections(), 1u) << "more idle connections kept than client_max_pool_size";
}

// Issue 18 §2: an empty cluster_name is the legacy namespace, and a cluster name may hold ':' and
// glob characters (listing must not match other clusters' keys).
TEST_F(RedisBackendTest, EmptyAndUnusualClusterNames) {
  Raw raw(redis_->port());
  auto legacy = Make("?cluster_name=");
  ASSERT_TRUE(legacy->TryLock(kLeaderLockKey, "node1", 10s, kNoDeadline).ok());
  EXPECT_EQ(raw.Cmd({"GET", "kvcm_lock:_TAIR_KVCM_LEADER_KEY"}), "node1");
  auto odd = Make("?cluster_name=team:a*");
  auto other = Make("?cluster_name=team:ab");
  ASSERT_TRUE(odd->TryLock(kLeaderLockKey, "node2", 10s, kNoDeadline).ok()) << "its own namespace";
  EXPECT_EQ(raw.Cmd({"GET", "kvcm_team:a*_lock:_TAIR_KVCM_LEADER_KEY"}), "node2");
  ASSERT_TRUE(odd->SetValue("n1", "x").ok());
  ASSERT_TRUE(other->SetValue("n2", "y").ok());
  auto listed = odd->ListValues("");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u) << "listing matched another cluster's keys";
  EXPECT_EQ((*listed)[0].key, "n1");
}

TEST_F(RedisBackendTest, ValuesTtlAndSortedListingAcrossScanPages) {
  auto b = Make("?cluster_name=c1");
  for (int i = 599; i >= 0; --i) {
    char key[32];
    std::snprintf(key, sizeof key, "hb/%04d", i);
    ASSERT_TRUE(b->SetValueWithTtl(key, "v" + std::to_string(i), 60s).ok());
  }
  ASSERT_TRUE(b->SetValue("hb*literal", "star").ok());
  ASSERT_TRUE(b->SetValue("other", "x").ok());
  auto list = b->ListValues("hb/");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 600u);
  EXPECT_EQ(list->front(), (KeyValue{"hb/0000", "v0"}));
  EXPECT_EQ(list->back(), (KeyValue{"hb/0599", "v599"}));
  EXPECT_TRUE(std::is_sorted(list->begin(), list->end(), [](auto& x, auto& y) { return x.key < y.key; }));
  auto star = b->ListValues("hb*");
  ASSERT_TRUE(star.ok());
  EXPECT_EQ(*star, (std::vector<KeyValue>{{"hb*literal", "star"}})) << "a '*' in the prefix must be literal";

  ASSERT_TRUE(b->SetValueWithTtl("t", "short", 50ms).ok());
  EXPECT_EQ(*b->GetValue("t"), "short");
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(b->GetValue("t").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(b->DeleteValue("other").ok());
  EXPECT_EQ(b->GetValue("other").status().code(), StatusCode::kNotFound);
}

TEST_F(RedisBackendTest, OutageGivesTimeoutThenRecovers) {
  auto b = Make("?timeout_ms=200&retry_count=1");
  ASSERT_TRUE(b->TryLock("L", "a", 30s, kNoDeadline).ok());
  redis_->Pause();
  Status s = b->RenewLock("L", "a", 30s, kNoDeadline);
  redis_->Resume();
  EXPECT_TRUE(s.code() == StatusCode::kTimeout || s.code() == StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("127.0.0.1:" + std::to_string(redis_->port())), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("2 attempt(s)"), std::string::npos) << s.message();
  EXPECT_TRUE(b->RenewLock("L", "a", 30s, kNoDeadline).ok()) << "did not reconnect after the outage";
  redis_->Restart();  // data not persisted: the lock and the scripts are gone
  auto g = b->TryLock("L", "b", 30s, kNoDeadline);
  ASSERT_TRUE(g.ok()) << "did not recover after a restart: " << g.status().ToString();
}

// A frozen server and the seed design's URI (5 s timeout, 3 retries: up to 20 s a call): a lock
// call with a 200 ms deadline gives up with kTimeout on its first attempt, long before one URI
// timeout. A call whose deadline has passed sends nothing.
TEST_F(RedisBackendTest, ALockCallEndsByItsDeadlineWhateverTheUriTimeout) {
  auto b = Make("?timeout_ms=5000&retry_count=3");
  ASSERT_TRUE(b->TryLock("L", "a", 30s, kNoDeadline).ok());
  Runtime& rt = Runtime::Real();
  redis_->Pause();
  const MonoTime start = rt.Now();
  Status s = b->RenewLock("L", "a", 30s, start + 200ms);
  const Duration took = rt.Now() - start;
  redis_->Resume();
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_NE(s.message().find("gave up at the caller's deadline after 1 attempt(s)"), std::string::npos) << s.message();
  EXPECT_LT(took, 5s) << "the call waited for the URI's timeout, not its deadline";
  Status late = b->RenewLock("L", "a", 30s, rt.Now() - 1ms);
  EXPECT_EQ(late.code(), StatusCode::kTimeout) << late.ToString();
  EXPECT_NE(late.message().find("deadline passed before the first attempt"), std::string::npos) << late.message();
  EXPECT_TRUE(b->RenewLock("L", "a", 30s, rt.Now() + 5s).ok()) << "did not recover after the outage";
}

// Another caller's command is stuck on a frozen server with the URI's 5 s timeout (a heartbeat
// sent into an outage): a lock call with a deadline must not queue behind it. It gives up by its
// own deadline while the other call is still waiting, and renews once the server answers again.
TEST_F(RedisBackendTest, ALockCallDoesNotWaitBehindAnotherCallersCommand) {
  auto b = Make("?timeout_ms=5000&retry_count=0");
  ASSERT_TRUE(b->TryLock("L", "a", 30s, kNoDeadline).ok());
  Runtime& rt = Runtime::Real();
  redis_->Pause();
  std::atomic<bool> other_done{false};
  std::thread other([&] {
    (void)b->SetValue("heartbeat", "x");
    other_done = true;
  });
  std::this_thread::sleep_for(50ms);  // the heartbeat is on the wire
  Status s = b->RenewLock("L", "a", 30s, rt.Now() + 200ms);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_FALSE(other_done.load()) << "the lock call waited for the other caller's command to end";
  redis_->Resume();
  EXPECT_TRUE(b->RenewLock("L", "a", 30s, rt.Now() + 2s).ok()) << "no renewal once the server answered again";
  other.join();
}

// Nothing listens (connections refused at once) and the URI asks for 100 retries (about 48 s of
// backoff): retries go on only while the deadline leaves time for them.
TEST(RedisBackendDeadlineTest, RetriesStopAtTheDeadline) {
  auto uri = ParseCoordinationUri("redis://127.0.0.1:" + std::to_string(kvchaos::testing::PickFreeLoopbackPort()) +
                                  "/?timeout_ms=1000&retry_count=100");
  ASSERT_TRUE(uri.ok()) << uri.status().ToString();
  CoordinationRedisBackend b(Runtime::Real(), uri->redis);
  Runtime& rt = Runtime::Real();
  const MonoTime start = rt.Now();
  Result<LockGrant> g = b.TryLock("L", "a", 10s, start + 300ms);
  const Duration took = rt.Now() - start;
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kTimeout) << g.status().ToString();
  EXPECT_NE(g.status().message().find("gave up at the caller's deadline"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("connect failed"), std::string::npos) << "the last error must be kept";
  EXPECT_LT(took, 5s) << "retried past the deadline";
}

TEST_F(RedisBackendTest, TwoElectorsHandOverAndShortOutageCausesNoFailover) {
  auto ba = Make("?timeout_ms=200&retry_count=1&cluster_name=e");
  auto bb = Make("?timeout_ms=200&retry_count=1&cluster_name=e");
  testing::CallbackLog la, lb;
  LeaderElectorOptions oa = testing::TestOptions("a"), ob = testing::TestOptions("b");
  oa.lease_ms = ob.lease_ms = 3000;
  oa.loop_interval_ms = ob.loop_interval_ms = 50;
  oa.safety_margin_ms = ob.safety_margin_ms = -1;
  LeaderElector a(Runtime::Real(), *ba, oa, la.Callbacks());
  LeaderElector b(Runtime::Real(), *bb, ob, lb.Callbacks());
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(testing::WaitFor([&] { return a.IsLeader(); }));
  ASSERT_TRUE(b.Start().ok());
  ASSERT_TRUE(testing::WaitFor([&] { return b.Snapshot().observed_leader_id == "a"; }));

  redis_->Pause();  // well under lease - margin
  std::this_thread::sleep_for(500ms);
  redis_->Resume();
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(a.IsLeader()) << "a short Redis outage caused a demotion";
  EXPECT_EQ(la.Demotions(), 0);
  EXPECT_EQ(lb.Promotions(), 0u) << "a short Redis outage caused a failover";

  a.Stop();
  ASSERT_TRUE(testing::WaitFor([&] { return b.IsLeader(); })) << "b did not take over";
  EXPECT_GT(b.CurrentToken(), la.promotions.at(0));
}

}  // namespace
}  // namespace kvchaos::election
