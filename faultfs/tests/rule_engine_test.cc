#include "faultfs/rule_engine.h"

#include <gtest/gtest.h>

#include <thread>

#include "faultfs/data_faults.h"
#include "faultfs/rule_parser.h"

namespace kvchaos::faultfs {
namespace {

Rule MustParse(const std::string& text) {
  auto rule = ParseRuleText(text, "test");
  EXPECT_TRUE(rule.ok()) << rule.status().ToString();
  return rule.ok() ? *rule : Rule{};
}

// Which of `n` read calls of `path` the engine hits.
std::vector<bool> HitPattern(RuleEngine& engine, int n, const std::string& path = "f") {
  std::vector<bool> hits;
  for (int i = 0; i < n; ++i) {
    CallPlan plan = engine.Plan(CallInfo{Op::kRead, path, 0, 4096});
    hits.push_back(plan.action.has_value());
  }
  return hits;
}

TEST(RuleEngineTest, EveryNthAndMaxHits) {
  RuleEngine engine(1, nullptr);
  ASSERT_TRUE(engine.Add({MustParse("{id: k, action: errno, every: 3}")}).ok());
  EXPECT_EQ(HitPattern(engine, 7), (std::vector<bool>{0, 0, 1, 0, 0, 1, 0}));
  engine.Clear();
  ASSERT_TRUE(engine.Add({MustParse("{id: n, action: errno, nth: 2}")}).ok());
  EXPECT_EQ(HitPattern(engine, 5), (std::vector<bool>{0, 1, 0, 0, 0}));
  engine.Clear();
  ASSERT_TRUE(engine.Add({MustParse("{id: m, action: errno, max_hits: 2}")}).ok());
  EXPECT_EQ(HitPattern(engine, 4), (std::vector<bool>{1, 1, 0, 0}));
}

TEST(RuleEngineTest, PathAndOpMustBothMatch) {
  RuleEngine engine(1, nullptr);
  ASSERT_TRUE(engine.Add({MustParse("{id: p, path: 'blocks/*', ops: [read], action: errno}")}).ok());
  EXPECT_TRUE(engine.Plan(CallInfo{Op::kRead, "blocks/a"}).action);
  EXPECT_FALSE(engine.Plan(CallInfo{Op::kRead, "meta/a"}).action);
  EXPECT_FALSE(engine.Plan(CallInfo{Op::kWrite, "blocks/a"}).action);
}

TEST(RuleEngineTest, ProbabilityIsAPureFunctionOfSeedRuleAndMatchCount) {
  const Rule rule = MustParse("{id: p, action: errno, probability: 0.3}");
  RuleEngine a(42, nullptr);
  RuleEngine b(42, nullptr);
  RuleEngine c(43, nullptr);
  ASSERT_TRUE(a.Add({rule}).ok());
  ASSERT_TRUE(b.Add({rule}).ok());
  ASSERT_TRUE(c.Add({rule}).ok());
  const auto pa = HitPattern(a, 200);
  EXPECT_EQ(pa, HitPattern(b, 200)) << "same seed, same calls: same hits";
  EXPECT_NE(pa, HitPattern(c, 200)) << "another seed should give another pattern";
  const auto hits = std::count(pa.begin(), pa.end(), true);
  EXPECT_GT(hits, 30);
  EXPECT_LT(hits, 90);
}

TEST(RuleEngineTest, ConcurrentCallsGetTheSameSetOfHitsAsSequentialOnes) {
  // Interleaving may change which thread gets match k, never which k are hit.
  const Rule rule = MustParse("{id: p, action: errno, probability: 0.5}");
  RuleEngine seq(9, nullptr);
  ASSERT_TRUE(seq.Add({rule}).ok());
  std::vector<uint64_t> expected;
  for (int i = 0; i < 400; ++i) {
    CallPlan plan = seq.Plan(CallInfo{Op::kRead, "f"});
    if (plan.action) expected.push_back(plan.action->match);
  }
  RuleEngine par(9, nullptr);
  ASSERT_TRUE(par.Add({rule}).ok());
  std::mutex mu;
  std::vector<uint64_t> got;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        CallPlan plan = par.Plan(CallInfo{Op::kRead, "f"});
        if (plan.action) {
          std::lock_guard<std::mutex> lock(mu);
          got.push_back(plan.action->match);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
}

TEST(RuleEngineTest, DisabledEngineHitsNothingAndRemoveForgetsTheRule) {
  RuleEngine engine(1, nullptr);
  ASSERT_TRUE(engine.Add({MustParse("{id: e, action: errno}")}).ok());
  engine.SetEnabled(false);
  EXPECT_FALSE(engine.Plan(CallInfo{Op::kRead, "f"}).action);
  engine.SetEnabled(true);
  EXPECT_TRUE(engine.Plan(CallInfo{Op::kRead, "f"}).action);
  EXPECT_FALSE(engine.Add({MustParse("{id: e, action: errno}")}).ok()) << "duplicate ids are refused";
  ASSERT_TRUE(engine.Remove("e").ok());
  EXPECT_FALSE(engine.Remove("e").ok());
  EXPECT_FALSE(engine.Plan(CallInfo{Op::kRead, "f"}).action);
}

TEST(RuleEngineTest, TimeWindowLimitsHits) {
  RuleEngine engine(1, nullptr);
  ASSERT_TRUE(engine.Add({MustParse("{id: w, action: errno, from: 10h}")}).ok());
  EXPECT_FALSE(engine.Plan(CallInfo{Op::kRead, "f"}).action) << "window has not opened";
  engine.Clear();
  ASSERT_TRUE(engine.Add({MustParse("{id: w, action: errno, until: 10h}")}).ok());
  EXPECT_TRUE(engine.Plan(CallInfo{Op::kRead, "f"}).action);
}

TEST(RuleEngineTest, HangBlocksUntilReleased) {
  RuleEngine engine(1, nullptr);
  ASSERT_TRUE(engine.Add({MustParse("{id: h, action: hang}")}).ok());
  std::atomic<bool> done{false};
  std::thread caller([&] {
    CallInfo call{Op::kRead, "f"};
    CallPlan plan = engine.Plan(call);
    engine.RunDelays(plan, call);
    done = true;
  });
  while (engine.Stats()["rules"][0]["hung"] != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(done.load());
  EXPECT_FALSE(engine.Release("nope").ok());
  auto released = engine.Release("h");
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, 1);
  caller.join();
  EXPECT_TRUE(done.load());
}

TEST(RuleEngineTest, AHangPlannedJustBeforeItsRuleIsRemovedDoesNotBlock) {
  // A call can plan a hang and be preempted before it starts waiting; a clear or remove in that
  // gap must still let it through, or it would wait for a release nobody can name.
  for (bool clear : {true, false}) {
    RuleEngine engine(1, nullptr);
    ASSERT_TRUE(engine.Add({MustParse("{id: h, action: hang}")}).ok());
    CallInfo call{Op::kRead, "f"};
    CallPlan plan = engine.Plan(call);
    ASSERT_EQ(plan.delays.size(), 1u);
    if (clear) {
      engine.Clear();
    } else {
      ASSERT_TRUE(engine.Remove("h").ok());
    }
    std::atomic<bool> done{false};
    std::thread caller([&] {
      engine.RunDelays(plan, call);
      done = true;
    });
    for (int i = 0; i < 2000 && !done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const bool finished = done.load();
    if (!finished) engine.Shutdown();  // do not leave the thread hanging when the check fails
    caller.join();
    EXPECT_TRUE(finished) << "a hang whose rule was " << (clear ? "cleared" : "removed")
                          << " before it began waiting blocked anyway";
  }
}

TEST(DataFaultsTest, FlipsExactlyTheLoggedBits) {
  Rule rule;
  rule.bits = 5;
  std::vector<uint8_t> data(512, 0);
  Rng rng(3);
  const auto bits = FlipBits(data, rule, rng);
  ASSERT_EQ(bits.size(), 5u);
  std::vector<uint8_t> expect(512, 0);
  for (uint64_t b : bits) expect[b / 8] ^= static_cast<uint8_t>(1u << (b % 8));
  EXPECT_EQ(data, expect);
}

TEST(DataFaultsTest, KeptLengthIsShorterThanTheCall) {
  Rule rule;
  rule.action = ActionKind::kTornWrite;
  Rng rng(5);
  for (int i = 0; i < 100; ++i) {
    const uint64_t kept = KeptLength(rule, 4096, rng);
    EXPECT_GE(kept, 1u);
    EXPECT_LT(kept, 4096u);
  }
  rule.bytes = 100;
  EXPECT_EQ(KeptLength(rule, 4096, rng), 100u);
  EXPECT_EQ(KeptLength(rule, 50, rng), 49u) << "never the whole call";
}

}  // namespace
}  // namespace kvchaos::faultfs
