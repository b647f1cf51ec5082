// Properties of the history checker (sim/linearizability.h): a history made by running the meta
// API's sequential model (its own small copy here) and drawing an interval around each op's
// linearization point (neighbours overlap; some outcomes unknown, applied or not) is always found
// linearizable; the same history with one read answered by an older value (no location, after a
// write finished and with no remove that could come between) never is.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/linearizability.h"

namespace kvchaos::sim {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kStepMs = 10;  // linearization points are this far apart; intervals reach 25 ms out

// One generated op: kind (0 start, 1 finish, 2 get, 3 remove), a choice (which session a finish
// names; whether an unknown op applied), the interval's reach before and after its point, unknown.
using OpSpec = std::tuple<int, int, int, int, bool>;

rc::Gen<OpSpec> GenOpSpec() {
  return rc::gen::tuple(rc::gen::weightedElement<int>({{6, 0}, {6, 1}, {7, 2}, {1, 3}}), rc::gen::inRange(0, 8),
                        rc::gen::inRange(0, 26), rc::gen::inRange(0, 26),
                        rc::gen::weightedElement<bool>({{19, false}, {1, true}}));
}

struct Model {
  enum class Kind { kAbsent, kWriting, kServing } kind = Kind::kAbsent;
  std::string session;
  int64_t checksum = 0;
};

// Runs the specs in order on the sequential model: the records a correct service would give.
std::vector<HistoryRecord> SequentialHistory(const std::vector<OpSpec>& specs) {
  std::vector<HistoryRecord> out;
  std::vector<std::string> sessions;  // sessions a client was told (a finish names one of them)
  Model m;
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto [kind, choice, before, after, unknown_flag] = specs[i];
    const int64_t point = static_cast<int64_t>(i + 1) * kStepMs * kMs;
    HistoryRecord r;
    r.client = "c" + std::to_string(choice % 3);
    r.key = "k";
    r.invoke_ns = point - before * kMs;
    r.complete_ns = point + after * kMs;
    const bool unknown = unknown_flag && kind != 2;
    const bool applies = !unknown || choice % 2 == 0;
    if (unknown) {
      r.outcome = HistoryOutcome::kUnknown;
      r.error = "Timeout: no answer";
    }
    switch (kind) {
      case 0: {
        r.op = HistoryOp::kStartWrite;
        r.storage = "s1";
        const std::string session = "ws-1-" + std::to_string(i);
        if (m.kind == Model::Kind::kServing) {
          r.found = true;
          r.checksum = m.checksum;
          r.session = session;
        } else {
          if (applies) m = Model{Model::Kind::kWriting, session, 0};
          if (!unknown) {
            r.session = session;
            sessions.push_back(session);
          }
        }
        if (unknown) r.found = false, r.checksum.reset(), r.session.clear();
        break;
      }
      case 1: {
        if (sessions.empty()) continue;
        r.op = HistoryOp::kFinishWrite;
        r.session = sessions[sessions.size() - 1 - static_cast<size_t>(choice) % sessions.size()];
        r.checksum = 1000 + static_cast<int64_t>(i);
        if (m.kind == Model::Kind::kWriting && m.session == r.session) {
          if (applies) m = Model{Model::Kind::kServing, "", *r.checksum};
        } else if (m.kind != Model::Kind::kServing && !unknown) {
          r.outcome = HistoryOutcome::kFailed;
          r.error = "InvalidArgument: FinishWriteCache: key 'k' has no location being written by session '" +
                    r.session + "'";
        }
        break;
      }
      case 2:
        r.op = HistoryOp::kGetLocation;
        if (m.kind == Model::Kind::kServing) {
          r.found = true;
          r.storage = "s1";
          r.checksum = m.checksum;
        }
        break;
      default:
        r.op = HistoryOp::kRemove;
        if (applies) m = Model{};
        break;
    }
    out.push_back(r);
  }
  return out;
}

RC_GTEST_PROP(HistoryProperties, SequentialRunWithOverlappingIntervalsIsLinearizable, ()) {
  const std::vector<OpSpec> specs = *rc::gen::resize(40, rc::gen::container<std::vector<OpSpec>>(GenOpSpec()));
  const std::vector<HistoryRecord> h = SequentialHistory(specs);
  const KeyCheck check = CheckKeyLinearizable(h, 2'000'000);
  std::string shown;
  for (const HistoryRecord& r : h) shown += DescribeOp(r) + "\n";
  RC_ASSERT_FALSE(check.verdict == KeyVerdict::kUnknownBudget);
  if (check.verdict != KeyVerdict::kLinearizable) RC_FAIL("a sequential run was not found linearizable:\n" + shown);
  const HistoryCheck all = CheckHistory(h);
  RC_ASSERT(all.lost_writes.empty());
  RC_ASSERT(all.non_monotonic_reads.empty());
  RC_ASSERT(all.read_your_writes.empty());
}

RC_GTEST_PROP(HistoryProperties, OneReadAnsweredByAnOlderValueIsNotLinearizable, ()) {
  const std::vector<OpSpec> specs = *rc::gen::resize(40, rc::gen::container<std::vector<OpSpec>>(GenOpSpec()));
  std::vector<HistoryRecord> h = SequentialHistory(specs);
  // A read that found a value committed by an acknowledged finish that ended before the read
  // began, with no remove (of any outcome) that could have come between.
  std::optional<size_t> victim;
  for (size_t r = 0; r < h.size() && !victim; ++r) {
    if (h[r].op != HistoryOp::kGetLocation || !h[r].found) continue;
    for (size_t f = 0; f < r; ++f) {
      const HistoryRecord& w = h[f];
      if (w.op != HistoryOp::kFinishWrite || w.outcome != HistoryOutcome::kOk || w.checksum != h[r].checksum ||
          w.complete_ns >= h[r].invoke_ns) {
        continue;
      }
      bool remove_between = false;
      for (const HistoryRecord& x : h) {
        const int64_t end = x.outcome == HistoryOutcome::kUnknown ? INT64_MAX : x.complete_ns;
        remove_between |= x.op == HistoryOp::kRemove && end >= w.invoke_ns && x.invoke_ns <= h[r].complete_ns;
      }
      if (!remove_between) victim = r;
    }
  }
  RC_PRE(victim.has_value());
  h[*victim].found = false;
  h[*victim].storage.clear();
  h[*victim].checksum.reset();
  const KeyCheck check = CheckKeyLinearizable(h, 2'000'000);
  if (check.verdict != KeyVerdict::kNotLinearizable) {
    std::string shown;
    for (const HistoryRecord& r : h) shown += DescribeOp(r) + "\n";
    RC_FAIL("read " + std::to_string(*victim) + " made stale, yet " + KeyVerdictName(check.verdict) + ":\n" + shown);
  }
  RC_ASSERT(!check.anomaly.empty());
  RC_ASSERT(check.anomaly.size() <= h.size());
}

}  // namespace
}  // namespace kvchaos::sim
