// Properties of faultfs's pure parts: the glob matcher, the rule engine's hit decisions (a pure
// function of seed, rule and match count), sticky bad ranges against a byte-map model, and bit
// flips matching what they report. Built when faultfs is (KVCHAOS_FUSE=ON).
#ifdef KVCHAOS_HAVE_FAULTFS

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "faultfs/bad_ranges.h"
#include "faultfs/data_faults.h"
#include "faultfs/glob.h"
#include "faultfs/rule_engine.h"

namespace kvchaos::faultfs {
namespace {

std::string GenPath() {
  const int parts = *rc::gen::inRange(1, 4);
  std::string path;
  for (int i = 0; i < parts; ++i) {
    if (i) path += '/';
    path += *rc::gen::container<std::string>(*rc::gen::inRange(1, 6), rc::gen::elementOf(std::string("abc.x")));
  }
  return path;
}

RC_GTEST_PROP(FaultfsGlobProperties, LiteralsMatchOnlyThemselvesAndDoubleStarMatchesAll, ()) {
  const std::string a = GenPath();
  const std::string b = GenPath();
  RC_ASSERT(GlobMatch(a, a));
  RC_ASSERT(GlobMatch(a, b) == (a == b));
  RC_ASSERT(GlobMatch("**", a));
  RC_ASSERT(GlobMatch("*", a) == (a.find('/') == std::string::npos));
}

Rule GenRule() {
  Rule rule;
  rule.id = "r" + std::to_string(*rc::gen::inRange(0, 1000));
  rule.ops = OpBit(Op::kRead);
  const int kind = *rc::gen::inRange(0, 3);
  if (kind == 0) {
    rule.trigger = Trigger::kEvery;
    rule.every = *rc::gen::inRange<uint64_t>(1, 6);
  } else if (kind == 1) {
    rule.trigger = Trigger::kNth;
    rule.nth = *rc::gen::inRange<uint64_t>(1, 20);
  } else {
    rule.trigger = Trigger::kProbability;
    rule.probability = *rc::gen::inRange(0, 101) / 100.0;
  }
  rule.max_hits = *rc::gen::inRange<uint64_t>(0, 8);
  return rule;
}

std::vector<uint64_t> HitMatches(const Rule& rule, uint64_t seed, int calls) {
  RuleEngine engine(seed, nullptr);
  RC_ASSERT(engine.Add({rule}).ok());
  std::vector<uint64_t> hits;
  for (int i = 0; i < calls; ++i) {
    CallPlan plan = engine.Plan(CallInfo{Op::kRead, "f"});
    if (plan.action) hits.push_back(plan.action->match);
  }
  return hits;
}

RC_GTEST_PROP(FaultfsEngineProperties, HitsArePureAndObeyTheirTrigger, ()) {
  const Rule rule = GenRule();
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  const int calls = *rc::gen::inRange(0, 60);
  const auto hits = HitMatches(rule, seed, calls);
  RC_ASSERT(hits == HitMatches(rule, seed, calls));
  if (rule.max_hits > 0) RC_ASSERT(hits.size() <= rule.max_hits);
  for (uint64_t k : hits) {
    if (rule.trigger == Trigger::kEvery) RC_ASSERT(k % rule.every == 0);
    if (rule.trigger == Trigger::kNth) RC_ASSERT(k == rule.nth);
  }
  if (rule.trigger == Trigger::kEvery && rule.max_hits == 0) {
    RC_ASSERT(hits.size() == static_cast<size_t>(calls) / rule.every);
  }
}

RC_GTEST_PROP(FaultfsBadRangeProperties, AgreesWithAByteMap, ()) {
  constexpr uint64_t kSpace = 64;
  BadRanges ranges;
  std::vector<bool> bad(kSpace, false);
  const int steps = *rc::gen::inRange(1, 30);
  for (int i = 0; i < steps; ++i) {
    const uint64_t off = *rc::gen::inRange<uint64_t>(0, kSpace);
    const uint64_t len = *rc::gen::inRange<uint64_t>(1, kSpace - off + 1);
    if (*rc::gen::arbitrary<bool>()) {
      ranges.Mark(1, off, len, "r");
      for (uint64_t b = off; b < off + len; ++b) bad[b] = true;
    } else {
      ranges.Heal(1, off, len);
      for (uint64_t b = off; b < off + len; ++b) bad[b] = false;
    }
    const uint64_t q = *rc::gen::inRange<uint64_t>(0, kSpace);
    const uint64_t qlen = *rc::gen::inRange<uint64_t>(1, kSpace - q + 1);
    bool expect = false;
    for (uint64_t b = q; b < q + qlen; ++b) expect = expect || bad[b];
    RC_ASSERT(ranges.Overlapping(1, q, qlen).has_value() == expect);
  }
  RC_ASSERT(!ranges.Overlapping(2, 0, kSpace).has_value());
}

RC_GTEST_PROP(FaultfsDataProperties, FlippedDataDiffersExactlyByTheReportedBits, ()) {
  std::vector<uint8_t> data = *rc::gen::container<std::vector<uint8_t>>(*rc::gen::inRange(0, 300), rc::gen::arbitrary<uint8_t>());
  const std::vector<uint8_t> before = data;
  Rule rule;
  rule.bits = *rc::gen::inRange<uint32_t>(1, 20);
  Rng rng(*rc::gen::arbitrary<uint64_t>());
  const auto bits = FlipBits(data, rule, rng);
  RC_ASSERT(bits.size() == (data.empty() ? 0u : rule.bits));
  std::vector<uint8_t> replay = before;
  for (uint64_t b : bits) replay[b / 8] ^= static_cast<uint8_t>(1u << (b % 8));
  RC_ASSERT(replay == data);
}

}  // namespace
}  // namespace kvchaos::faultfs

#endif  // KVCHAOS_HAVE_FAULTFS
