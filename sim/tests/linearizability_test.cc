// The linearizability checker and the cheap invariants on hand-written histories of one meta key:
// what a correct service may answer passes, and each anomaly users ask about (a stale read after a
// completed write, a lost write, a read going back after a failover, an unknown write seen to
// vanish) fails with the ops that show it; a search past its budget says so, naming the key.
#include "sim/linearizability.h"

#include <gtest/gtest.h>

#include <optional>

namespace kvchaos::sim {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr const char* kStorage = "s1";

HistoryRecord Base(HistoryOp op, const std::string& client, const std::string& key, int64_t from_ms, int64_t to_ms) {
  HistoryRecord r;
  r.op = op;
  r.client = client;
  r.key = key;
  r.invoke_ns = from_ms * kMs;
  r.complete_ns = to_ms * kMs;
  return r;
}

HistoryRecord Start(const std::string& client, int64_t from_ms, int64_t to_ms, const std::string& session,
                    const std::string& key = "k") {
  HistoryRecord r = Base(HistoryOp::kStartWrite, client, key, from_ms, to_ms);
  r.session = session;
  r.storage = kStorage;
  r.term = TermOfSession(session);
  return r;
}

HistoryRecord Finish(const std::string& client, int64_t from_ms, int64_t to_ms, const std::string& session,
                     int64_t checksum, const std::string& key = "k") {
  HistoryRecord r = Base(HistoryOp::kFinishWrite, client, key, from_ms, to_ms);
  r.session = session;
  r.checksum = checksum;
  return r;
}

// A read; `checksum` nullopt: it found no location.
HistoryRecord Get(const std::string& client, int64_t from_ms, int64_t to_ms, std::optional<int64_t> checksum,
                  const std::string& key = "k") {
  HistoryRecord r = Base(HistoryOp::kGetLocation, client, key, from_ms, to_ms);
  r.found = checksum.has_value();
  if (r.found) {
    r.storage = kStorage;
    r.checksum = checksum;
  }
  return r;
}

HistoryRecord Remove(const std::string& client, int64_t from_ms, int64_t to_ms, const std::string& key = "k") {
  return Base(HistoryOp::kRemove, client, key, from_ms, to_ms);
}

HistoryRecord Unknown(HistoryRecord r) {
  r.outcome = HistoryOutcome::kUnknown;
  r.error = "Timeout: no answer";
  return r;
}

std::string Show(const std::vector<HistoryRecord>& ops) {
  std::string out;
  for (const HistoryRecord& r : ops) out += "\n  " + DescribeOp(r);
  return out;
}

KeyVerdict VerdictOf(const std::vector<HistoryRecord>& h) { return CheckKeyLinearizable(h, 100'000).verdict; }

TEST(LinearizabilityTest, SequentialWriteAndReadsAreLinearizable) {
  const std::vector<HistoryRecord> h = {Get("a", 0, 1, std::nullopt), Start("a", 2, 3, "ws-1-1"),
                                        Get("b", 4, 5, std::nullopt),  // writing: not readable yet
                                        Finish("a", 6, 7, "ws-1-1", 70), Get("b", 8, 9, 70), Get("a", 10, 11, 70)};
  EXPECT_EQ(VerdictOf(h), KeyVerdict::kLinearizable) << Show(h);
}

TEST(LinearizabilityTest, ReadConcurrentWithTheWriteMaySeeEitherAnswer) {
  for (std::optional<int64_t> seen : {std::optional<int64_t>(), std::optional<int64_t>(70)}) {
    const std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), Finish("a", 2, 6, "ws-1-1", 70),
                                          Get("b", 3, 4, seen), Get("b", 7, 8, 70)};
    EXPECT_EQ(VerdictOf(h), KeyVerdict::kLinearizable) << Show(h);
  }
}

TEST(LinearizabilityTest, StaleReadAfterACompletedWriteFails) {
  const std::vector<HistoryRecord> h = {Get("b", 0, 1, std::nullopt), Start("a", 2, 3, "ws-1-1"),
                                        Finish("a", 4, 5, "ws-1-1", 70), Get("a", 6, 7, 70),
                                        Get("b", 8, 9, std::nullopt)};  // a deposed leader's old map
  const KeyCheck check = CheckKeyLinearizable(h, 100'000);
  ASSERT_EQ(check.verdict, KeyVerdict::kNotLinearizable) << Show(h);
  // The explanation: the write (its start, which the finish needs) and the stale read, nothing else.
  ASSERT_EQ(check.anomaly.size(), 3u) << "smallest failing sub-history:" << Show(check.anomaly);
  EXPECT_EQ(check.anomaly[0].op, HistoryOp::kStartWrite);
  EXPECT_EQ(check.anomaly[1].op, HistoryOp::kFinishWrite);
  EXPECT_EQ(check.anomaly[2].op, HistoryOp::kGetLocation);
  EXPECT_FALSE(check.anomaly[2].found);
  EXPECT_EQ(check.anomaly[2].invoke_ns, 8 * kMs);
}

TEST(LinearizabilityTest, LostWriteFailsAndTheInvariantNamesIt) {
  std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), Finish("a", 2, 3, "ws-1-1", 70),
                                  Get("verify", 100, 101, std::nullopt)};
  EXPECT_EQ(VerdictOf(h), KeyVerdict::kNotLinearizable) << Show(h);
  const std::vector<InvariantFinding> lost = CheckNoLostWrites(h);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].key, "k");
  EXPECT_EQ(lost[0].ops.size(), 2u);
  // A remove that may have come after the write explains the empty read.
  h.push_back(Remove("c", 50, 51));
  EXPECT_TRUE(CheckNoLostWrites(h).empty());
  EXPECT_EQ(VerdictOf(h), KeyVerdict::kLinearizable) << Show(h);
}

TEST(LinearizabilityTest, ReadGoingBackAfterAFailoverFails) {
  std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), Finish("a", 2, 3, "ws-1-1", 70)};
  HistoryRecord seen = Get("b", 4, 5, 70);
  seen.term = 1;
  HistoryRecord back = Get("b", 20, 21, std::nullopt);  // the new leader lost the entry
  back.term = 2;
  h.push_back(seen);
  h.push_back(back);
  const KeyCheck check = CheckKeyLinearizable(h, 100'000);
  EXPECT_EQ(check.verdict, KeyVerdict::kNotLinearizable) << Show(h);
  const std::vector<InvariantFinding> mono = CheckMonotonicReads(h);
  ASSERT_EQ(mono.size(), 1u);
  EXPECT_EQ(mono[0].client, "b");
  EXPECT_NE(mono[0].what.find("no location"), std::string::npos) << mono[0].what;
}

TEST(LinearizabilityTest, UnknownWriteMayHaveApplied) {
  const std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), Unknown(Finish("a", 2, 3, "ws-1-1", 70)),
                                        Get("b", 10, 11, std::nullopt), Get("b", 20, 21, 70), Get("c", 30, 31, 70)};
  EXPECT_EQ(VerdictOf(h), KeyVerdict::kLinearizable) << "an unknown write may take effect long after its call" << Show(h);
}

TEST(LinearizabilityTest, UnknownWriteMayNeverApply) {
  const std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), Unknown(Finish("a", 2, 3, "ws-1-1", 70)),
                                        Get("b", 10, 11, std::nullopt), Get("b", 20, 21, std::nullopt)};
  EXPECT_EQ(VerdictOf(h), KeyVerdict::kLinearizable) << Show(h);
}

TEST(LinearizabilityTest, UnknownWriteSeenThenGoneFails) {
  const std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), Unknown(Finish("a", 2, 3, "ws-1-1", 70)),
                                        Get("b", 10, 11, 70), Get("c", 20, 21, std::nullopt)};
  EXPECT_EQ(VerdictOf(h), KeyVerdict::kNotLinearizable) << "a value read cannot vanish without a remove" << Show(h);
}

TEST(LinearizabilityTest, UnknownStartTakesOverAndBlocksAFinish) {
  // An unknown start_write of another session may have taken the location over before the finish.
  const std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), Unknown(Start("b", 2, 3, "ws-2-1")),
                                        Base(HistoryOp::kFinishWrite, "a", "k", 10, 11)};
  std::vector<HistoryRecord> refused = h;
  refused[2].session = "ws-1-1";
  refused[2].outcome = HistoryOutcome::kFailed;
  refused[2].error = "InvalidArgument: FinishWriteCache: key 'k' has no location being written by session 'ws-1-1'";
  EXPECT_EQ(VerdictOf(refused), KeyVerdict::kLinearizable) << Show(refused);
  // Without the unknown start, that refusal contradicts the model.
  std::vector<HistoryRecord> alone = {refused[0], refused[2]};
  EXPECT_EQ(VerdictOf(alone), KeyVerdict::kNotLinearizable) << Show(alone);
}

TEST(LinearizabilityTest, StartOnACachedKeyMustSayCached) {
  std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), Finish("a", 2, 3, "ws-1-1", 70)};
  HistoryRecord cached = Start("b", 4, 5, "ws-1-2");
  cached.found = true;
  cached.checksum = 70;
  h.push_back(cached);
  EXPECT_EQ(VerdictOf(h), KeyVerdict::kLinearizable) << Show(h);
  h.back().found = false;  // "write it": the service forgot the committed block
  EXPECT_EQ(VerdictOf(h), KeyVerdict::kNotLinearizable) << Show(h);
}

TEST(LinearizabilityTest, ReadYourWritesAcrossAFailover) {
  std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), Finish("a", 2, 3, "ws-1-1", 70),
                                  Get("a", 10, 11, std::nullopt)};
  const std::vector<InvariantFinding> ryw = CheckReadYourWrites(h);
  ASSERT_EQ(ryw.size(), 1u);
  EXPECT_EQ(ryw[0].client, "a");
  EXPECT_TRUE(CheckReadYourWrites(std::vector<HistoryRecord>{h[0], h[1], Get("a", 10, 11, 70)}).empty());
  EXPECT_TRUE(CheckReadYourWrites(std::vector<HistoryRecord>{h[0], h[1], Remove("b", 5, 6), h[2]}).empty()) << "a remove explains it";
}

TEST(LinearizabilityTest, FailedCallsConstrainNothing) {
  HistoryRecord failed = Finish("a", 2, 3, "ws-1-1", 70);
  failed.outcome = HistoryOutcome::kFailed;
  failed.error = "NotLeader: node 1 does not lead";
  HistoryRecord failed_read = Get("b", 4, 5, 99);
  failed_read.outcome = HistoryOutcome::kFailed;
  const std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), failed, failed_read, Get("b", 6, 7, std::nullopt)};
  EXPECT_EQ(VerdictOf(h), KeyVerdict::kLinearizable) << Show(h);
}

// Thirty timed-out removes are pending at once; one of them explains the read of none. Alike
// pending ops are one choice, not 2^30 subsets: the search stays within a small budget.
TEST(LinearizabilityTest, ManyAlikePendingUnknownOpsStayCheap) {
  std::vector<HistoryRecord> h = {Start("a", 0, 1, "ws-1-1"), Finish("a", 2, 3, "ws-1-1", 70)};
  for (int i = 0; i < 30; ++i) h.push_back(Unknown(Remove("r" + std::to_string(i), 10 + i, 11 + i)));
  for (int i = 0; i < 30; ++i) h.push_back(Unknown(Start("s" + std::to_string(i), 10 + i, 11 + i, "")));
  h.push_back(Get("b", 45, 46, 70));
  h.push_back(Get("b", 50, 51, std::nullopt));
  h.push_back(Get("c", 55, 56, std::nullopt));
  const KeyCheck check = CheckKeyLinearizable(h, 20'000);
  EXPECT_EQ(check.verdict, KeyVerdict::kLinearizable) << "steps " << check.steps << Show(h);
  h.push_back(Get("c", 60, 61, 70));  // the value cannot come back: nothing wrote it again
  EXPECT_EQ(CheckKeyLinearizable(h, 200'000).verdict, KeyVerdict::kNotLinearizable);
}

TEST(LinearizabilityTest, BudgetExhaustionIsAnUnknownVerdictNamingTheKey) {
  std::vector<HistoryRecord> h;
  for (int i = 0; i < 20; ++i) h.push_back(Get("c" + std::to_string(i), 0, 100, std::nullopt, "hot-key"));
  h.push_back(Get("x", 0, 1, std::nullopt, "cold-key"));
  HistoryCheckOptions options;
  options.max_steps_per_key = 5;
  const HistoryCheck check = CheckHistory(h, options);
  EXPECT_EQ(check.Verdict(), "unknown (budget)") << "never a silent pass past the budget";
  ASSERT_EQ(check.budget_keys, std::vector<std::string>{"hot-key"});
  EXPECT_NE(check.FirstAnomaly().find("hot-key"), std::string::npos) << check.FirstAnomaly();
  EXPECT_EQ(check.keys, 2u);
}

TEST(LinearizabilityTest, CheckHistoryPartitionsByKeyAndNamesTheBadOne) {
  std::vector<HistoryRecord> h;
  for (int k = 0; k < 5; ++k) {
    const std::string key = "k" + std::to_string(k);
    const std::string session = "ws-1-" + std::to_string(k);
    h.push_back(Start("a", 10 * k, 10 * k + 1, session, key));
    h.push_back(Finish("a", 10 * k + 2, 10 * k + 3, session, 100 + k, key));
    h.push_back(Get("b", 10 * k + 4, 10 * k + 5, k == 3 ? std::optional<int64_t>(999) : 100 + k, key));
  }
  HistoryRecord save = Base(HistoryOp::kSave, "a", "k0", 0, 4);
  h.push_back(save);  // end-to-end records are not meta ops
  const HistoryCheck check = CheckHistory(h);
  EXPECT_EQ(check.operations, 15u);
  EXPECT_EQ(check.keys, 5u);
  EXPECT_EQ(check.keys_not_linearizable, 1u);
  EXPECT_EQ(check.Verdict(), "not linearizable");
  ASSERT_EQ(check.failures.size(), 1u);
  EXPECT_EQ(check.failures[0].key, "k3");
  EXPECT_NE(check.FirstAnomaly().find("key 'k3'"), std::string::npos) << check.FirstAnomaly();
}

}  // namespace
}  // namespace kvchaos::sim
