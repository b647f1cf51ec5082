// Trace: equal event sequences hash equal, any differing field changes the hash, checkpoints are
// taken every K events, and text is produced for the capture window only.
#include "sim/trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvchaos::sim {
namespace {

void Feed(Trace& trace, int n, int changed_at = -1) {
  for (int i = 0; i < n; ++i) trace.Event(i * 1000, i % 3, static_cast<uint64_t>(i % 5), "run", i == changed_at ? 1 : 0);
}

TEST(TraceTest, SameEventsSameHashAndCheckpoints) {
  Trace a(10), b(10);
  Feed(a, 105);
  Feed(b, 105);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.checkpoints(), b.checkpoints());
  EXPECT_EQ(a.checkpoints().size(), 10u) << "one checkpoint per 10 events";
  EXPECT_EQ(a.events(), 105u);
}

TEST(TraceTest, OneDifferentArgumentChangesHashFromThatCheckpointOn) {
  Trace a(10), b(10);
  Feed(a, 100);
  Feed(b, 100, 42);
  EXPECT_NE(a.hash(), b.hash());
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a.checkpoints()[i], b.checkpoints()[i]) << "checkpoint " << i;
  for (size_t i = 4; i < 10; ++i) EXPECT_NE(a.checkpoints()[i], b.checkpoints()[i]) << "checkpoint " << i;
}

TEST(TraceTest, DetailAndTagAreHashed) {
  Trace a, b, c;
  a.Event(1, 0, 1, "send", 0, 0, "TryLock");
  b.Event(1, 0, 1, "send", 0, 0, "Renew");
  c.Event(1, 0, 1, "recv", 0, 0, "TryLock");
  EXPECT_NE(a.hash(), b.hash());
  EXPECT_NE(a.hash(), c.hash());
}

TEST(TraceTest, CaptureWindowAndSinkProduceTextLines) {
  Trace trace;
  std::vector<std::string> sink;
  trace.CaptureWindow(2, 4);
  trace.SetNamer([](int node, uint64_t thread) { return "n" + std::to_string(node) + ":t" + std::to_string(thread); });
  Feed(trace, 6);
  ASSERT_EQ(trace.captured().size(), 2u);
  EXPECT_EQ(trace.captured()[0], "#2 2.000us n2:t2 run");
  trace.SetSink([&](std::string_view line) { sink.emplace_back(line); });
  trace.Event(1'234'567, -1, 0, "fault", 3, 0, "crash n1");
  ASSERT_EQ(sink.size(), 1u);
  EXPECT_EQ(sink[0], "#6 1234.567us n-1:t0 fault 3 crash n1");
}

}  // namespace
}  // namespace kvchaos::sim
