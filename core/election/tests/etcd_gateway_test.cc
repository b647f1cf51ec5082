// EtcdGateway's failover, backoff and deadline logic through its transport seam: a scripted
// EtcdTransport plays members that refuse, stay silent, say "no leader" or answer, on virtual time
// (sim/virtual_time.h), so every path is exercised without an etcd and without waiting. The same
// gateway runs over HTTP on real members (etcd_backend_test.cc) and over the simulator's network.
#include "core/election/etcd_gateway.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "sim/virtual_time.h"

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;

// What a scripted member does with one request.
struct Scripted {
  enum class Kind { kRefuse, kSilent, kAnswer } kind = Kind::kAnswer;
  int http_status = 200;
  std::string body;
};
Scripted Refuse() { return {Scripted::Kind::kRefuse, 0, {}}; }
Scripted Silent() { return {Scripted::Kind::kSilent, 0, {}}; }
Scripted Answer(std::string body, int status = 200) { return {Scripted::Kind::kAnswer, status, std::move(body)}; }
Scripted NoLeader() {
  return Answer(R"({"error":"etcdserver: no leader","code":14,"message":"etcdserver: no leader"})", 503);
}

// Plays `script(member, elapsed since the start)`; a silent member lets the whole timeout pass.
class ScriptedTransport final : public EtcdTransport {
 public:
  using Script = std::function<Scripted(size_t member, Duration elapsed)>;
  ScriptedTransport(Runtime& runtime, Script script, std::vector<size_t>* calls)
      : runtime_(runtime), script_(std::move(script)), calls_(calls), start_(runtime.Now()) {}

  EtcdExchange Post(size_t member, std::string_view, const std::string&, Duration timeout) override {
    calls_->push_back(member);
    runtime_.SleepFor(1ms);  // a round trip
    const Scripted s = script_(member, runtime_.Now() - start_);
    switch (s.kind) {
      case Scripted::Kind::kRefuse:
        return {false, 0, {}, Status::Unavailable("cannot connect (refused)")};
      case Scripted::Kind::kSilent:
        runtime_.SleepFor(timeout - 1ms);
        return {false, 0, {}, Status::Timeout("no answer within " + std::to_string(ToMillis(timeout)) + " ms")};
      case Scripted::Kind::kAnswer:
        break;
    }
    return {true, s.http_status, s.body, Status::Ok()};
  }

 private:
  Runtime& runtime_;
  Script script_;
  std::vector<size_t>* calls_;
  MonoTime start_;
};

EtcdEndpoints ThreeMembers(int64_t timeout_ms = 500, int retry_count = 2) {
  EtcdEndpoints e;
  for (const char* host : {"m0", "m1", "m2"}) e.members.push_back({host, 2379});
  e.timeout_ms = timeout_ms;
  e.retry_count = retry_count;
  return e;
}

// Runs `body` with a gateway over `script` on virtual time.
void WithGateway(const ScriptedTransport::Script& script, EtcdEndpoints endpoints, std::vector<size_t>* calls,
                 const std::function<void(sim::SimRuntime&, EtcdGateway&)>& body) {
  sim::SimRuntime runtime(sim::UnitTestOptions());
  const std::string unfinished = sim::RunOnVirtualTime(runtime, [&] {
    EtcdGateway gateway(runtime, std::move(endpoints), std::make_unique<ScriptedTransport>(runtime, script, calls));
    body(runtime, gateway);
  });
  EXPECT_EQ(unfinished, "");
}

TEST(EtcdGatewayTest, MovesOnFromARefusingAndASilentMemberAndGoesToTheOneThatAnsweredNext) {
  std::vector<size_t> calls;
  const auto script = [](size_t member, Duration) {
    return member == 0 ? Refuse() : member == 1 ? Silent() : Answer(R"({"header":{},"count":"1"})");
  };
  WithGateway(script, ThreeMembers(), &calls, [&](sim::SimRuntime&, EtcdGateway& gateway) {
    auto r = gateway.Call("/v3/kv/range", {{"key", "eA=="}}, kNoDeadline);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)["count"], "1");
    EXPECT_EQ(gateway.PreferredMember(), "m2:2379") << "the member that answered must be asked first next time";
    ASSERT_TRUE(gateway.Call("/v3/kv/range", {{"key", "eA=="}}, kNoDeadline).ok());
  });
  EXPECT_EQ(calls, (std::vector<size_t>{0, 1, 2, 2})) << "failover order, then the preferred member";
}

TEST(EtcdGatewayTest, NoLeaderAnswersRideOutAnElectionWithoutUsingUpRetries) {
  std::vector<size_t> calls;
  // Every member says "no leader" for 400 ms (an election), then the cluster serves.
  const auto script = [](size_t, Duration elapsed) {
    return elapsed < 400ms ? NoLeader() : Answer(R"({"header":{},"ID":"7","TTL":"5"})");
  };
  WithGateway(script, ThreeMembers(/*timeout_ms=*/500, /*retry_count=*/2), &calls, [&](sim::SimRuntime&, EtcdGateway& gateway) {
    auto r = gateway.Call("/v3/lease/grant", {{"TTL", "5"}}, kNoDeadline);
    ASSERT_TRUE(r.ok()) << "an election shorter than timeout_ms must be ridden out: " << r.status().ToString();
    EXPECT_EQ((*r)["ID"], "7");
  });
  EXPECT_GT(calls.size(), 3u) << "the attempts during the election must not have used up retry_count 2";
}

TEST(EtcdGatewayTest, AStreamGivesItsFirstResultAndRefusalsAreNotFailedOver) {
  std::vector<size_t> calls;
  const auto script = [](size_t member, Duration) {
    if (member == 1) return Answer(R"({"error":"etcdserver: requested lease not found","code":5,"message":"etcdserver: requested lease not found"})", 404);
    return Answer("{\"result\":{\"ID\":\"7\",\"TTL\":\"5\"}}\n{\"result\":{\"ID\":\"7\",\"TTL\":\"4\"}}\n");
  };
  WithGateway(script, ThreeMembers(), &calls, [&](sim::SimRuntime&, EtcdGateway& gateway) {
    auto kept = gateway.Call("/v3/lease/keepalive", {{"ID", "7"}}, kNoDeadline);
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    EXPECT_EQ((*kept)["TTL"], "5") << "a stream's first message is the answer";
  });
  std::vector<size_t> refused;
  WithGateway([&](size_t, Duration) { return script(1, Duration::zero()); }, ThreeMembers(), &refused,
              [&](sim::SimRuntime&, EtcdGateway& gateway) {
                auto r = gateway.Call("/v3/lease/revoke", {{"ID", "7"}}, kNoDeadline);
                EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().ToString();
                EXPECT_NE(r.status().message().find("etcd m0:2379"), std::string::npos) << "the refusal names the member";
              });
  EXPECT_EQ(refused.size(), 1u) << "a refusal for good (NOT_FOUND) must not be sent to another member";
}

TEST(EtcdGatewayTest, SilentMembersEndTheCallAtItsDeadline) {
  std::vector<size_t> calls;
  WithGateway([](size_t, Duration) { return Silent(); }, ThreeMembers(/*timeout_ms=*/1000, /*retry_count=*/5), &calls,
              [&](sim::SimRuntime& runtime, EtcdGateway& gateway) {
                const MonoTime start = runtime.Now();
                auto r = gateway.Call("/v3/kv/txn", nlohmann::json::object(), start + 1200ms);
                EXPECT_EQ(r.status().code(), StatusCode::kTimeout) << r.status().ToString();
                EXPECT_LE(runtime.Now() - start, 1200ms) << "an attempt outlived the caller's deadline";
              });
  EXPECT_EQ(calls, (std::vector<size_t>{0, 1})) << "the second attempt gets what is left of the deadline, then none starts";
}

}  // namespace
}  // namespace kvchaos::election
