// Coordination URIs: accepted forms, upstream Redis rules, and errors that name the bad part
// without leaking the password.
#include "core/election/coordination_uri.h"

#include <gtest/gtest.h>

#include "core/common/real_runtime.h"

namespace kvchaos::election {
namespace {

TEST(CoordinationUriTest, MemoryAndEmptyMeanOneProcess) {
  for (std::string_view uri : {"", "memory://"}) {
    auto u = ParseCoordinationUri(uri);
    ASSERT_TRUE(u.ok()) << uri;
    EXPECT_EQ(u->kind, CoordinationUri::Kind::kMemory);
  }
}

TEST(CoordinationUriTest, FileNeedsAnAbsolutePath) {
  auto u = ParseCoordinationUri("file:///shared/lock/dir");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->kind, CoordinationUri::Kind::kFile);
  EXPECT_EQ(u->file_dir, "/shared/lock/dir");
  EXPECT_EQ(ParseCoordinationUri("file://localhost/x")->file_dir, "/x");
  auto rel = ParseCoordinationUri("file://relative/dir");
  EXPECT_EQ(rel.status().code(), StatusCode::kInvalidConfig);
  EXPECT_NE(rel.status().message().find("absolute"), std::string::npos) << rel.status().message();
}

TEST(CoordinationUriTest, RedisFullForm) {
  auto u = ParseCoordinationUri(
      "redis://tok%40en@redis-host:6380/?db=2&timeout_ms=5000&retry_count=3&cluster_name=kvcm_app_0");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  const RedisEndpoint& r = u->redis;
  EXPECT_EQ(u->kind, CoordinationUri::Kind::kRedis);
  EXPECT_EQ(r.host, "redis-host");
  EXPECT_EQ(r.port, 6380);
  EXPECT_EQ(r.password, "tok@en");
  EXPECT_EQ(r.user, "");
  EXPECT_EQ(r.db, 2);
  EXPECT_EQ(r.timeout_ms, 5000);
  EXPECT_EQ(r.retry_count, 3);
  EXPECT_EQ(r.cluster_name, "kvcm_app_0");
}

TEST(CoordinationUriTest, RedisDefaultsUserPasswordIpv6AndPathIsNotTheDb) {
  auto u = ParseCoordinationUri("redis://10.0.0.1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->redis.port, 6379);
  EXPECT_EQ(u->redis.db, 0);
  EXPECT_EQ(u->redis.cluster_name, "");
  auto path = ParseCoordinationUri("redis://h:1/1");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->redis.db, 0) << "upstream rule: a path never selects the DB";
  auto acl = ParseCoordinationUri("redis://alice:s3cret@h:1/");
  ASSERT_TRUE(acl.ok());
  EXPECT_EQ(acl->redis.user, "alice");
  EXPECT_EQ(acl->redis.password, "s3cret");
  auto v6 = ParseCoordinationUri("redis://[::1]:7000/?db=1");
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(v6->redis.host, "::1");
  EXPECT_EQ(v6->redis.port, 7000);
}

TEST(CoordinationUriTest, RedisSentinelSentinelsMasterAndTheRedisKeys) {
  auto u = ParseCoordinationUri(
      "redis+sentinel://alice:pw%40x@10.0.0.1:26380,s2,[::1]:7000/mymaster?db=2&timeout_ms=300&retry_count=4"
      "&cluster_name=app");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->kind, CoordinationUri::Kind::kRedisSentinel);
  const RedisEndpoint& r = u->redis;
  EXPECT_EQ(r.sentinels,
            (std::vector<SentinelAddress>{{"10.0.0.1", 26380}, {"s2", 26379}, {"::1", 7000}}))
      << "26379 is the sentinel port by default";
  EXPECT_EQ(r.master_name, "mymaster");
  EXPECT_EQ(r.host, "") << "the primary is not known before the sentinels are asked";
  EXPECT_EQ(r.user, "alice");
  EXPECT_EQ(r.password, "pw@x");
  EXPECT_EQ(r.db, 2);
  EXPECT_EQ(r.timeout_ms, 300);
  EXPECT_EQ(r.retry_count, 4);
  EXPECT_EQ(r.cluster_name, "app");
  auto plain = ParseCoordinationUri("redis+sentinel://h/m%2Dx");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->redis.master_name, "m-x") << "the master name is percent-decoded";
  EXPECT_EQ(plain->redis.timeout_ms, 1000) << "the redis:// defaults";
  auto backend = CreateCoordinationBackend("redis+sentinel://h:1/m", Runtime::Real());
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_NE((*backend)->Describe().find("redis+sentinel://h:1/m primary=(not known yet)"), std::string::npos)
      << (*backend)->Describe();
}

TEST(CoordinationUriTest, EtcdMembersPrefixAndTimeouts) {
  auto u = ParseCoordinationUri("etcd://10.0.0.1:2379,etcd-2,[::1]:2380/?prefix=team%2Fa/&timeout_ms=250&retry_count=5");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->kind, CoordinationUri::Kind::kEtcd);
  const EtcdEndpoints& e = u->etcd;
  EXPECT_EQ(e.members, (std::vector<EtcdMember>{{"10.0.0.1", 2379}, {"etcd-2", 2379}, {"::1", 2380}}));
  EXPECT_EQ(e.prefix, "team/a/");
  EXPECT_EQ(e.timeout_ms, 250);
  EXPECT_EQ(e.retry_count, 5);

  auto defaults = ParseCoordinationUri("etcd://h");
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(defaults->etcd.members, (std::vector<EtcdMember>{{"h", 2379}})) << "etcd's client port is the default";
  EXPECT_EQ(defaults->etcd.prefix, "kvchaos/");
  EXPECT_EQ(defaults->etcd.timeout_ms, 1000);
  EXPECT_EQ(defaults->etcd.retry_count, 2) << "at least 2 retries, as Redis";
  auto five = ParseCoordinationUri("etcd://a:1,b:1,c:1,d:1,e:1/");
  ASSERT_TRUE(five.ok());
  EXPECT_EQ(five->etcd.retry_count, 4) << "by default each member is tried once";
  auto none = ParseCoordinationUri("etcd://a:1,b:1,c:1/?retry_count=0");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->etcd.retry_count, 0) << "a retry_count given is kept";
}

TEST(CoordinationUriTest, BadPartsAreNamedAndSecretsRedacted) {
  struct Case {
    std::string uri;
    std::string part;
  };
  const std::vector<Case> cases = {
      {"redis://secretpw@h:abc/", "port 'abc'"},
      {"redis://secretpw@h:0/", "port '0'"},
      {"redis://secretpw@h:70000/", "port '70000'"},
      {"redis://secretpw@:6379/", "host"},
      {"redis://h:1/?db=-1", "db '-1'"},
      {"redis://h:1/?db=x", "db 'x'"},
      {"redis://h:1/?timeout_ms=0", "timeout_ms '0'"},
      {"redis://h:1/?retry_count=-2", "retry_count '-2'"},
      {"redis://h:1/?cluster_name=a%01b", "cluster_name holds control character 0x01"},
      {"redis://h:1/?colour=blue", "unknown query parameter 'colour'"},
      {"redis://h:1/?client_max_pool_size=-1", "client_max_pool_size '-1'"},
      {"redis://h:1/?client_min_pool_size=many", "client_min_pool_size 'many'"},
      {"redis://h:1/?client_max_pool_size=2&client_min_pool_size=3", "client_min_pool_size 3 is more than"},
      {"redis_cluster://secretpw@h:1/", "redis_cluster:// is not supported"},
      {"redis://h:1/?db=1&db=2", "'db' is given twice"},
      {"redis://h:1/?db", "'db' has no '='"},
      {"redis://h:1/?db=", "'db' has an empty value"},
      {"etcd://", "members: none given"},
      {"etcd://h:1,,h:2/", "member 2: empty"},
      {"etcd://h:1,/", "member 2: empty"},
      {"etcd://h:1,h:x/", "port 'x'"},
      {"etcd://h:1,h:1/", "member 'h:1' is given twice"},
      {"etcd://:2379/", "host: missing"},
      {"etcd://secretpw@h:1/", "no credentials"},
      {"etcd://h:1/kv", "path '/kv'"},
      {"etcd://h:1/?prefix=", "'prefix' has an empty value"},
      {"etcd://h:1/?prefix=a%0Ab", "prefix holds control character 0x0a"},
      {"etcd://h:1/?timeout_ms=0", "timeout_ms '0'"},
      {"etcd://h:1/?retry_count=x", "retry_count 'x'"},
      {"etcd://h:1/?db=1", "unknown query parameter 'db' (known: prefix, timeout_ms, retry_count)"},
      {"etcd://h:1/?prefix=a&prefix=b", "'prefix' is given twice"},
      {"etcd3://h:1", "unknown scheme 'etcd3'"},
      {"redis+sentinel://secretpw@/M", "sentinels: none given"},
      {"redis+sentinel://h:1", "master name: missing"},
      {"redis+sentinel://secretpw@h:1/", "master name: missing"},
      {"redis+sentinel://h:1/?db=1", "master name: missing"},
      {"redis+sentinel://h:1,,h:2/M", "sentinel 2: empty"},
      {"redis+sentinel://h:1,h:1/M", "sentinel 'h:1' is given twice"},
      {"redis+sentinel://h:x/M", "port 'x'"},
      {"redis+sentinel://h:1/a/b", "master name 'a/b' holds '/'"},
      {"redis+sentinel://h:1/a%20b", "master name holds character 0x20"},
      {"redis+sentinel://h:1/M%zz", "master name: bad %-escape"},
      {"redis+sentinel://h:1/M?db=x", "db 'x'"},
      {"redis+sentinel://h:1/M?prefix=p", "unknown query parameter 'prefix'"},
      {"h:1", "no scheme"},
      {"memory://x", "memory://"},
      {"file:///a?x=1", "no query"},
  };
  for (const auto& c : cases) {
    auto u = ParseCoordinationUri(c.uri);
    ASSERT_FALSE(u.ok()) << c.uri << " was accepted";
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidConfig) << c.uri;
    EXPECT_NE(u.status().message().find(c.part), std::string::npos)
        << c.uri << ": message does not name '" << c.part << "': " << u.status().message();
    EXPECT_EQ(u.status().message().find("secretpw"), std::string::npos) << "password leaked: " << u.status().message();
  }
}

// URIs an upstream node is configured with work unchanged (issue 18 §2).
TEST(CoordinationUriTest, UpstreamQueryParametersAreAccepted) {
  auto pools = ParseCoordinationUri("redis://h:1/?client_max_pool_size=16&client_min_pool_size=2");
  ASSERT_TRUE(pools.ok()) << pools.status().ToString();
  EXPECT_EQ(pools->redis.max_idle_connections, 16);
  EXPECT_EQ(pools->redis.min_connections, 2);
  auto zeros = ParseCoordinationUri("redis://h:1/?client_max_pool_size=0&client_min_pool_size=0");
  ASSERT_TRUE(zeros.ok()) << zeros.status().ToString();
  EXPECT_EQ(zeros->redis.max_idle_connections, RedisEndpoint::kDefaultMaxIdleConnections) << "0 keeps the default";
  EXPECT_EQ(zeros->redis.min_connections, 1) << "0 keeps the default";
  auto empty = ParseCoordinationUri("redis://h:1/?cluster_name=&db=1");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->redis.cluster_name, "") << "an empty cluster_name means the legacy key names";
  EXPECT_EQ(empty->redis.db, 1);
  for (std::string_view name : {"team:a", "a*b?[c]", "x y", "kvcm_app_0"}) {
    std::string encoded;
    for (char c : name) encoded += c == ' ' ? std::string("%20") : std::string(1, c);
    auto u = ParseCoordinationUri("redis://h:1/?cluster_name=" + encoded);
    ASSERT_TRUE(u.ok()) << name << ": " << u.status().ToString();
    EXPECT_EQ(u->redis.cluster_name, name);
  }
  auto auth = ParseCoordinationUri("redis://ops:p%3Aw@h:1/");
  ASSERT_TRUE(auth.ok());
  EXPECT_EQ(auth->redis.auth, "ops:p:w") << "the auth part as given, for upstream's one-argument AUTH";
  EXPECT_EQ(auth->redis.user, "ops");
  EXPECT_EQ(auth->redis.password, "p:w");
}

TEST(CoordinationUriTest, FactoryBuildsEachKind) {
  Runtime& rt = Runtime::Real();
  auto m = CreateCoordinationBackend("memory://", rt);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)->Describe(), "memory://");
  auto f = CreateCoordinationBackend("file:///tmp/kvchaos-never-created", rt);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->Describe(), "file:///tmp/kvchaos-never-created");
  auto r = CreateCoordinationBackend("redis://pw@127.0.0.1:1/?cluster_name=c", rt);
  ASSERT_TRUE(r.ok()) << "building must not connect";
  EXPECT_EQ((*r)->Describe(), "redis://127.0.0.1:1 db=0 cluster=c");
  auto e = CreateCoordinationBackend("etcd://127.0.0.1:1,127.0.0.1:2/?prefix=p/", rt);
  ASSERT_TRUE(e.ok()) << "building must not connect";
  EXPECT_EQ((*e)->Describe(), "etcd://127.0.0.1:1,127.0.0.1:2 prefix=p/");
  auto bad = CreateCoordinationBackend("redis://h:x", rt);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidConfig);
}

}  // namespace
}  // namespace kvchaos::election
