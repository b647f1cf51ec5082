// History records: the JSON-lines file reads back exactly what was written, a bad line is refused
// naming the line and field, session ids give their term, and the recorder takes records from
// many threads without losing one.
#include "sim/history.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace kvchaos::sim {
namespace {

HistoryRecord Sample() {
  HistoryRecord r;
  r.id = 7;
  r.client = "kvc_load0";
  r.op = HistoryOp::kGetLocation;
  r.key = "k3.v1";
  r.outcome = HistoryOutcome::kOk;
  r.invoke_ns = 1'000;
  r.complete_ns = 2'500;
  r.found = true;
  r.storage = "sim-posix";
  r.location = "0123456789abcdef0123456789abcdef";
  r.checksum = -42;  // any int64, 0 and negatives included
  r.node = "n2";
  r.term = 9;
  return r;
}

TEST(HistoryTest, JsonLinesRoundTrip) {
  testing::TempDir dir("history");
  std::vector<HistoryRecord> records;
  records.push_back(Sample());
  HistoryRecord unknown;
  unknown.id = 8;
  unknown.client = "sim_verify";
  unknown.op = HistoryOp::kStartWrite;
  unknown.key = "k\"odd\" key";
  unknown.outcome = HistoryOutcome::kUnknown;
  unknown.error = "Timeout: no answer in 1000 ms";
  unknown.invoke_ns = 5;
  unknown.complete_ns = 5;
  records.push_back(unknown);
  HistoryRecord save;
  save.op = HistoryOp::kSave;
  save.key = "k1.v0";
  save.version = 0;
  save.checksum = 0;
  records.push_back(save);

  const std::string path = dir.str() + "/history.jsonl";
  ASSERT_TRUE(WriteHistory(records, path).ok());
  Result<std::vector<HistoryRecord>> back = ReadHistory(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ((*back)[i], records[i]) << "record " << i << " changed on the way: " << ToJsonLine(records[i]);
  }
  EXPECT_EQ((*back)[2].checksum, std::optional<int64_t>(0)) << "checksum 0 must stay present, not read as none";
}

TEST(HistoryTest, BadLinesNameTheLineAndField) {
  testing::TempDir dir("history");
  const std::string path = dir.str() + "/history.jsonl";
  std::string good = ToJsonLine(Sample());
  {
    std::ofstream out(path);
    out << good << "\n\n" << R"({"id":1,"client":"c","op":"read","key":"k","outcome":"ok","invoke_ns":1,"complete_ns":2,"found":false})"
        << "\n";
  }
  Result<std::vector<HistoryRecord>> r = ReadHistory(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("history.jsonl:3"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("'op'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("'read'"), std::string::npos) << r.status().message();

  Result<HistoryRecord> missing = HistoryRecordFromJsonLine(R"({"id":1,"client":"c"})", "h:1");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing field 'op'"), std::string::npos) << missing.status().message();

  Result<HistoryRecord> typed = HistoryRecordFromJsonLine(
      R"({"id":1,"client":"c","op":"remove","key":"k","outcome":"ok","invoke_ns":"1","complete_ns":2,"found":false})", "h:2");
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(typed.status().message().find("'invoke_ns' has the wrong type"), std::string::npos) << typed.status().message();

  Result<HistoryRecord> backwards = HistoryRecordFromJsonLine(
      R"({"id":1,"client":"c","op":"remove","key":"k","outcome":"ok","invoke_ns":5,"complete_ns":2,"found":false})", "h:3");
  ASSERT_FALSE(backwards.ok());
  EXPECT_NE(backwards.status().message().find("before 'invoke_ns'"), std::string::npos) << backwards.status().message();

  EXPECT_FALSE(ReadHistory(dir.str() + "/none.jsonl").ok());
}

TEST(HistoryTest, TermOfSessionId) {
  EXPECT_EQ(TermOfSession("ws-12-3"), 12);
  EXPECT_EQ(TermOfSession("ws-0-1"), 0);
  EXPECT_EQ(TermOfSession("ws--1"), -1);
  EXPECT_EQ(TermOfSession("session-1"), -1);
  EXPECT_EQ(TermOfSession("ws-x1-2"), -1);
}

TEST(HistoryTest, TakeRecordsGivesWhatRecordsGivesAndEmptiesTheRecorder) {
  HistoryRecorder recorder(Runtime::Real());
  for (int i = 0; i < 3; ++i) {
    HistoryRecord r;
    r.key = "k" + std::to_string(i);
    r.invoke_ns = 30 - 10 * i;  // filed in reverse invoke order
    r.complete_ns = r.invoke_ns + 1;
    recorder.Add(r);
  }
  const std::vector<HistoryRecord> copied = recorder.Records();
  const std::vector<HistoryRecord> taken = recorder.TakeRecords();
  EXPECT_EQ(taken, copied) << "TakeRecords must give the records Records() gives, in the same order";
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken.front().key, "k2") << "records are sorted by invoke time";
  EXPECT_EQ(recorder.size(), 0u) << "the records were moved out";
}

TEST(HistoryTest, RecorderTakesRecordsFromManyThreads) {
  Runtime& runtime = Runtime::Real();
  HistoryRecorder recorder(runtime);
  constexpr int kThreads = 4;
  constexpr int kEach = 500;
  std::vector<Thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.push_back(runtime.Spawn("hist_test" + std::to_string(t), [&recorder, t] {
      for (int i = 0; i < kEach; ++i) {
        HistoryRecord r;
        r.client = "c" + std::to_string(t);
        r.key = "k" + std::to_string(i);
        r.invoke_ns = recorder.NowNs();
        r.complete_ns = recorder.NowNs();
        recorder.Add(r);
      }
    }));
  }
  for (Thread& t : threads) t.Join();
  const std::vector<HistoryRecord> all = recorder.Records();
  ASSERT_EQ(all.size(), static_cast<size_t>(kThreads * kEach)) << "records were lost";
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_LE(all[i - 1].invoke_ns, all[i].invoke_ns) << "Records() is sorted by invoke time";
  }
  std::vector<bool> ids(all.size(), false);
  for (const HistoryRecord& r : all) {
    ASSERT_LT(r.id, ids.size());
    EXPECT_FALSE(ids[r.id]) << "id " << r.id << " given twice";
    ids[r.id] = true;
  }
}

TEST(HistoryTest, RecorderUsesTheGivenClock) {
  int64_t now = 100;
  HistoryRecorder recorder(Runtime::Real(), [&now] { return now; });
  EXPECT_EQ(recorder.NowNs(), 100);
  EXPECT_EQ(recorder.NowNs(), 101) << "no two events share a stamp: the order of calls is kept";
  now = 250;
  EXPECT_EQ(recorder.NowNs(), 250);
}

}  // namespace
}  // namespace kvchaos::sim
