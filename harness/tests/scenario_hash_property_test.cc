// Properties of the scenario hash: it depends on what a run does, not on how the file spells it.
// rapidcheck writes the same scenario in many spellings (units, key order, flow vs block style,
// comments, explicit defaults) and checks the hash never moves, and that changing a value does move it.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/scenario_hash.h"
#include "harness/scenario_loader.h"

namespace kvchaos::harness {
namespace {

struct Values {
  int nodes;
  int lease_ms;
  int fault_at_s;
  int fault_for_s;
};

// One spelling of the scenario `v`, chosen by the generated `style` bits and `order`.
std::string Spell(const Values& v, unsigned style, const std::vector<int>& order, uint64_t seed) {
  std::vector<std::string> top;
  top.push_back("name: spelled\n");
  top.push_back("mode: sim\n");
  top.push_back("seed: " + std::to_string(seed) + "\n");
  top.push_back((style & 1) ? "duration: 10m\n" : "duration: 600000\n");
  std::string topology = (style & 2) ? "topology: {nodes: " + std::to_string(v.nodes) +
                                           ", lease_ms: " + std::to_string(v.lease_ms) + ", loop_interval_ms: 10}\n"
                                     : "topology:\n  loop_interval_ms: 10\n  lease_ms: " +
                                           std::to_string(v.lease_ms) + "\n  nodes: " + std::to_string(v.nodes) + "\n";
  if (style & 4) topology += (style & 2) ? "" : "  coordination: sim-redis  # the default anyway\n";
  top.push_back(topology);
  const std::string at = (style & 8) ? std::to_string(v.fault_at_s) + "s" : std::to_string(v.fault_at_s * 1000);
  const std::string length = (style & 16) ? std::to_string(v.fault_for_s * 1000) + "ms" : std::to_string(v.fault_for_s) + "s";
  top.push_back("faults:\n  - action: pause\n    for: " + length + "\n    node: 0\n    at: " + at + "\n");
  if (style & 32) top.push_back("expect: {no_stale_writes: true, min_ops: 0}\n");
  if (style & 64) top.push_back("description: a comment-like text that must not change the hash\n");
  std::string text = "# leading comment\n";
  for (int i : order) text += top[static_cast<size_t>(i) % top.size()];
  return text;
}

std::vector<int> Permutation(size_t n, const std::vector<int>& keys) {
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return keys[static_cast<size_t>(a) % keys.size()] < keys[static_cast<size_t>(b) % keys.size()];
  });
  return order;
}

rc::Gen<Values> GenValues() {
  return rc::gen::build<Values>(rc::gen::set(&Values::nodes, rc::gen::inRange(1, 65)),
                                rc::gen::set(&Values::lease_ms, rc::gen::inRange(100, 60000)),
                                rc::gen::set(&Values::fault_at_s, rc::gen::inRange(0, 500)),
                                rc::gen::set(&Values::fault_for_s, rc::gen::inRange(1, 90)));
}

std::string HashOf(const std::string& text) {
  Result<Scenario> s = ParseScenario(text, "p.yaml");
  RC_ASSERT(s.ok());
  return ScenarioHash(*s);
}

RC_GTEST_PROP(ScenarioHashProperty, SameContentSameHashWhateverTheSpelling, ()) {
  const Values v = *GenValues();
  const unsigned style_a = *rc::gen::inRange(0u, 128u);
  const unsigned style_b = *rc::gen::inRange(0u, 128u);
  const auto keys_a = *rc::gen::container<std::vector<int>>(8, rc::gen::arbitrary<int>());
  const auto keys_b = *rc::gen::container<std::vector<int>>(8, rc::gen::arbitrary<int>());
  const uint64_t seed_a = *rc::gen::arbitrary<uint64_t>();
  const uint64_t seed_b = *rc::gen::arbitrary<uint64_t>();
  const size_t parts_a = (style_a & 32 ? 1 : 0) + (style_a & 64 ? 1 : 0) + 6;
  const size_t parts_b = (style_b & 32 ? 1 : 0) + (style_b & 64 ? 1 : 0) + 6;
  const std::string a = Spell(v, style_a, Permutation(parts_a, keys_a), seed_a >> 1);
  const std::string b = Spell(v, style_b, Permutation(parts_b, keys_b), seed_b >> 1);
  RC_ASSERT(HashOf(a) == HashOf(b));
}

RC_GTEST_PROP(ScenarioHashProperty, ChangingWhatTheRunDoesChangesTheHash, ()) {
  const Values v = *GenValues();
  Values w = v;
  switch (*rc::gen::inRange(0, 4)) {
    case 0: w.nodes = v.nodes % 64 + 1; break;
    case 1: w.lease_ms = v.lease_ms + 1; break;
    case 2: w.fault_at_s = (v.fault_at_s + 1) % 500; break;
    default: w.fault_for_s = v.fault_for_s % 89 + 1; break;
  }
  const std::vector<int> order{0, 1, 2, 3, 4, 5};
  RC_ASSERT(HashOf(Spell(v, 0, order, 1)) != HashOf(Spell(w, 0, order, 1)));
}

TEST(ScenarioHash, ElectorAndClientSettingsCountOnlyWhenGiven) {
  const Values v{3, 2000, 10, 5};
  const std::vector<int> order{0, 1, 2, 3, 4, 5};
  const std::string base = Spell(v, 0, order, 1);
  Result<Scenario> plain = ParseScenario(base, "p.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(CanonicalScenarioJson(*plain)["topology"].contains("coordination_timeout_ns"))
      << "an unset setting must not enter the hash (scenarios from before keep theirs)";
  for (const std::string key : {"coordination_timeout_ms: 700", "coordination_retries: 0", "safety_margin_ms: 150",
                                "forbid_campaign_ms: 900"}) {
    std::string text = base;
    text.insert(text.find("  nodes:"), "  " + key + "\n");
    EXPECT_NE(HashOf(text), HashOf(base)) << key << " did not change the hash";
  }
}

TEST(ScenarioHash, IsSixteenHexDigitsAndIgnoresTheSeed) {
  const Values v{3, 2000, 10, 5};
  const std::vector<int> order{0, 1, 2, 3, 4, 5};
  const std::string h = HashOf(Spell(v, 0, order, 1));
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos) << h;
  EXPECT_EQ(h, HashOf(Spell(v, 0, order, 99))) << "--seed must not change the scenario's identity";
}

}  // namespace
}  // namespace kvchaos::harness
