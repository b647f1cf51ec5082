// One fence rule and one compare-and-set rule (core/meta/fence.h), checked the same way on every
// meta indexer: the local one (which calls CheckFence and CheckWriteId) and Redis (whose Lua
// scripts re-state them on the server, run here on a real redis-server). Each fence case brings a
// fresh index's fence to `newest`, then writes with `token` through one operation; the outcome and
// the newest token after it must be CheckFence's. Each write-id case brings a fresh index's record
// to a state, then writes it conditionally; the outcome and the record after it must be
// CheckWriteId's (or CheckDeleteWriteId's); an ordered delete's must be WrittenAfter's.
#include "core/meta/fence.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/meta/meta_indexer.h"
#include "testing/redis_server.h"

namespace kvchaos::meta {
namespace {

using kvchaos::testing::RedisServer;

enum class Op { kPut, kDelete, kRaiseFence };
const char* OpName(Op op) { return op == Op::kPut ? "Put" : op == Op::kDelete ? "Delete" : "RaiseFence"; }

struct FenceCase {
  uint64_t newest;
  uint64_t token;
};

// Below, equal and above the newest token; around 0, and past 2^53 where a double cannot tell
// neighbours apart (Lua numbers are doubles, so the script compares decimal strings).
std::vector<FenceCase> Cases() {
  const uint64_t big = (uint64_t{1} << 53) + 1;
  return {{0, 0},     {0, 1},         {1, 0},       {5, 4},       {5, 5},          {5, 6},
          {9, 10},    {10, 9},        {99, 100},    {100, 99},    {big, big - 1},  {big, big},
          {big, big + 1}, {big + 1, big}, {uint64_t{1} << 62, (uint64_t{1} << 62) + 1}};
}

Status Apply(MetaIndexer& idx, Op op, uint64_t token) {
  switch (op) {
    case Op::kPut: {
      const MetaWrite write{"k", {{"f", "v"}}};
      return idx.Put(token, std::span(&write, 1));
    }
    case Op::kDelete: {
      const std::string key = "k";
      return idx.Delete(token, std::span(&key, 1));
    }
    case Op::kRaiseFence:
      return idx.RaiseFence(token);
  }
  return Status::Internal("unknown op");
}

class FenceContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "redis") {
      redis_ = RedisServer::Start();
      if (!redis_) GTEST_SKIP() << RedisServer::SkipReason();
    }
  }
  // A fresh index (its own key prefix on the shared redis-server) whose fence is at `newest`.
  std::unique_ptr<MetaIndexer> Fresh(int n, uint64_t newest) {
    const std::string uri = redis_ ? redis_->uri() + "/?prefix=c" + std::to_string(n) + "_" : "memory://";
    Result<std::unique_ptr<MetaIndexer>> idx = OpenMetaIndexer(uri);
    EXPECT_TRUE(idx.ok()) << idx.status().ToString();
    if (!idx.ok()) return nullptr;
    if (newest > 0) {
      EXPECT_TRUE((*idx)->RaiseFence(newest).ok());
    }
    return std::move(*idx);
  }
  std::unique_ptr<RedisServer> redis_;
};

TEST_P(FenceContractTest, EveryWriteFollowsCheckFence) {
  int n = 0;
  for (Op op : {Op::kPut, Op::kDelete, Op::kRaiseFence}) {
    for (const FenceCase& c : Cases()) {
      std::unique_ptr<MetaIndexer> idx = Fresh(++n, c.newest);
      ASSERT_NE(idx, nullptr);
      const FenceVerdict want = CheckFence(c.newest, c.token);
      const Status got = Apply(*idx, op, c.token);
      const std::string where = std::string(OpName(op)) + " with token " + std::to_string(c.token) +
                                " on a fence at " + std::to_string(c.newest);
      EXPECT_EQ(got.ok(), want.accepted) << where << ": " << got.ToString();
      if (!want.accepted) {
        EXPECT_EQ(got.code(), StatusCode::kStaleFencingToken) << where << ": " << got.ToString();
      }
      Result<uint64_t> newest = idx->NewestFencingToken();
      ASSERT_TRUE(newest.ok()) << newest.status().ToString();
      EXPECT_EQ(*newest, want.newest) << where << ": the newest token after the write";
      if (op == Op::kPut) {
        const std::string key = "k";
        auto record = idx->Get(std::span(&key, 1));
        ASSERT_TRUE(record.ok());
        EXPECT_EQ((*record)[0].has_value(), want.accepted) << where << ": a refused write must change nothing";
      }
    }
  }
}

// The record "k" a write-id case starts from.
enum class Start { kAbsent, kNoWriteId, kWriteIdA };
const char* StartName(Start s) {
  return s == Start::kAbsent ? "no record" : s == Start::kNoWriteId ? "a record without write id" : "a record of write 'a'";
}
std::string CurrentId(Start s) { return s == Start::kWriteIdA ? "a" : ""; }

Status Prepare(MetaIndexer& idx, Start s) {
  if (s == Start::kAbsent) return Status::Ok();
  MetaWrite old{"k", {{"f", "old"}}};
  if (s == Start::kWriteIdA) old.write_id = "a";
  return idx.Put(1, std::span(&old, 1));
}

std::optional<MetaRecord> RecordOfK(MetaIndexer& idx) {
  const std::string key = "k";
  auto records = idx.Get(std::span(&key, 1));
  EXPECT_TRUE(records.ok()) << records.status().ToString();
  return records.ok() ? (*records)[0] : std::nullopt;
}

TEST_P(FenceContractTest, ConditionalPutsFollowCheckWriteId) {
  struct IdCase {
    std::string write_id, expected;
  };
  const std::vector<IdCase> ids = {{"", ""}, {"a", ""}, {"b", "a"}, {"b", ""}, {"a", "a"}, {"b", "c"}};
  int n = 0;
  for (Start start : {Start::kAbsent, Start::kNoWriteId, Start::kWriteIdA}) {
    for (const IdCase& c : ids) {
      std::unique_ptr<MetaIndexer> idx = Fresh(++n, 0);
      ASSERT_NE(idx, nullptr);
      ASSERT_TRUE(Prepare(*idx, start).ok());
      const std::optional<MetaRecord> before = RecordOfK(*idx);
      const WriteIdVerdict want = CheckWriteId(CurrentId(start), c.expected, c.write_id);
      const MetaWrite write{"k", {{"f", "new"}}, c.write_id, c.expected};
      const Status got = idx->Put(7, std::span(&write, 1));
      const std::string where = "Put of write '" + c.write_id + "' expecting '" + c.expected + "' on " + StartName(start);
      EXPECT_EQ(got.ok(), want != WriteIdVerdict::kConflict) << where << ": " << got.ToString();
      if (want == WriteIdVerdict::kConflict) {
        EXPECT_EQ(got.code(), StatusCode::kConflict) << where;
      }
      MetaRecord applied{{"f", "new"}};
      if (!c.write_id.empty()) applied[std::string(kWriteIdField)] = c.write_id;
      EXPECT_EQ(RecordOfK(*idx), want == WriteIdVerdict::kApply ? std::optional(applied) : before)
          << where << ": the record after the write";
      Result<uint64_t> newest = idx->NewestFencingToken();
      ASSERT_TRUE(newest.ok());
      EXPECT_EQ(*newest, want == WriteIdVerdict::kConflict ? (start == Start::kAbsent ? 0u : 1u) : 7u)
          << where << ": a refused write must not raise the fence";
    }
  }
}

TEST_P(FenceContractTest, ConditionalDeletesFollowCheckDeleteWriteId) {
  int n = 100;
  for (Start start : {Start::kAbsent, Start::kNoWriteId, Start::kWriteIdA}) {
    for (const std::string expected : {"", "a", "b"}) {
      std::unique_ptr<MetaIndexer> idx = Fresh(++n, 0);
      ASSERT_NE(idx, nullptr);
      ASSERT_TRUE(Prepare(*idx, start).ok());
      const std::optional<MetaRecord> before = RecordOfK(*idx);
      const WriteIdVerdict want = CheckDeleteWriteId(start != Start::kAbsent, CurrentId(start), expected);
      const std::string key = "k";
      const Status got = idx->Delete(7, std::span(&key, 1), std::span(&expected, 1));
      const std::string where = "Delete expecting '" + expected + "' of " + StartName(start);
      EXPECT_EQ(got.ok(), want != WriteIdVerdict::kConflict) << where << ": " << got.ToString();
      if (want == WriteIdVerdict::kConflict) {
        EXPECT_EQ(got.code(), StatusCode::kConflict) << where;
      }
      EXPECT_EQ(RecordOfK(*idx), want == WriteIdVerdict::kConflict ? before : std::nullopt)
          << where << ": the record after the delete";
    }
  }
}

// An ordered delete (a delete id of its own) keeps the records written after it and deletes the
// rest; the call is OK and raises the fence. Record ids before, equal to and after the delete's, in
// its term and in other terms, around 2^53, of other lengths, and not write ids at all.
TEST_P(FenceContractTest, OrderedDeletesFollowWrittenAfter) {
  const std::string del = "w-7-10";
  const std::string big_del = "w-7-9007199254740992";
  struct OrderCase {
    std::string record_id, delete_id;
  };
  const std::vector<OrderCase> cases = {
      {"", del},        {"a", del},       {"w-7-9", del},  {"w-7-10", del}, {"w-7-11", del},
      {"w-7-100", del}, {"w-6-99", del},  {"w-8-1", del},  {"w-10-1", del}, {"w-7-", del},
      {"w-x-11", del},  {"w-7-9007199254740993", big_del}, {"w-7-9007199254740991", big_del}};
  int n = 400;
  for (const OrderCase& c : cases) {
    std::unique_ptr<MetaIndexer> idx = Fresh(++n, 0);
    ASSERT_NE(idx, nullptr);
    MetaWrite old{"k", {{"f", "old"}}, c.record_id, ""};
    ASSERT_TRUE(idx->Put(1, std::span(&old, 1)).ok());
    const std::optional<MetaRecord> before = RecordOfK(*idx);
    const bool keep = WrittenAfter(c.record_id, c.delete_id);
    const std::string key = "k";
    const Status got = idx->Delete(7, std::span(&key, 1), {}, c.delete_id);
    const std::string where = "Delete '" + c.delete_id + "' of a record of write '" + c.record_id + "'";
    EXPECT_TRUE(got.ok()) << where << ": " << got.ToString();
    EXPECT_EQ(RecordOfK(*idx), keep ? before : std::nullopt) << where << ": the record after the delete";
    Result<uint64_t> newest = idx->NewestFencingToken();
    ASSERT_TRUE(newest.ok());
    EXPECT_EQ(*newest, 7u) << where << ": an ordered delete raises the fence";
  }
  // Both outcomes in one call; an absent key is fine.
  std::unique_ptr<MetaIndexer> idx = Fresh(++n, 0);
  ASSERT_NE(idx, nullptr);
  const std::vector<MetaWrite> writes = {{"j", {{"f", "old"}}, "w-7-3", ""}, {"k", {{"f", "new"}}, "w-7-30", ""}};
  ASSERT_TRUE(idx->Put(1, writes).ok());
  const Status got = idx->Delete(7, std::vector<std::string>{"j", "k", "absent"}, {}, del);
  EXPECT_TRUE(got.ok()) << got.ToString();
  auto records = idx->Get(std::vector<std::string>{"j", "k"});
  ASSERT_TRUE(records.ok());
  EXPECT_FALSE((*records)[0].has_value()) << "j, written before the delete, was kept";
  EXPECT_TRUE((*records)[1].has_value()) << "k, written after the delete, was deleted";
  EXPECT_EQ(idx->Delete(7, std::vector<std::string>{"k"}, {}, "not-an-id").code(), StatusCode::kInvalidArgument);
  const std::vector<std::string> expected = {"w-7-30"};
  EXPECT_EQ(idx->Delete(7, std::vector<std::string>{"k"}, expected, del).code(), StatusCode::kInvalidArgument)
      << "expected ids and a delete id at once";
  EXPECT_TRUE(RecordOfK(*idx).has_value()) << "a refused Delete deleted a record";
}

// A conflict on one key of a call refuses the whole call: the other keys keep their records.
TEST_P(FenceContractTest, AConflictOnOneKeyChangesNoKeyOfTheCall) {
  std::unique_ptr<MetaIndexer> idx = Fresh(200, 0);
  ASSERT_NE(idx, nullptr);
  ASSERT_TRUE(Prepare(*idx, Start::kWriteIdA).ok());
  const std::vector<MetaWrite> writes = {{"j", {{"f", "new"}}, "b", ""}, {"k", {{"f", "new"}}, "b", "stale"}};
  const Status put = idx->Put(7, writes);
  EXPECT_EQ(put.code(), StatusCode::kConflict) << put.ToString();
  const std::vector<std::string> keys = {"j", "k"};
  auto records = idx->Get(keys);
  ASSERT_TRUE(records.ok());
  EXPECT_FALSE((*records)[0].has_value()) << "key j of a refused Put was written";
  EXPECT_EQ((*records)[1], (MetaRecord{{"f", "old"}, {std::string(kWriteIdField), "a"}}));
  const std::vector<std::string> expected = {"a", "stale"};
  const Status del = idx->Delete(7, std::vector<std::string>{"k", "k"}, expected);
  EXPECT_EQ(del.code(), StatusCode::kConflict) << del.ToString();
  EXPECT_TRUE(RecordOfK(*idx).has_value()) << "a refused Delete deleted a record";
}

// The same for a call of many keys (a node writes a request's blocks in one call): a conflict on
// the last key leaves the first ones as they were, however many there are.
TEST_P(FenceContractTest, AConflictOnTheLastOfManyKeysChangesNoneOfThem) {
  std::unique_ptr<MetaIndexer> idx = Fresh(210, 0);
  ASSERT_NE(idx, nullptr);
  constexpr int kKeys = 1000;
  std::vector<MetaWrite> first;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) {
    keys.push_back("k" + std::to_string(i));
    first.push_back({keys.back(), {{"f", "old"}}, "a" + std::to_string(i), ""});
  }
  ASSERT_TRUE(idx->Put(7, first).ok());
  std::vector<MetaWrite> second = first;
  for (int i = 0; i < kKeys; ++i) {
    second[i] = {keys[i], {{"f", "new"}}, "b" + std::to_string(i), "a" + std::to_string(i)};
  }
  second.back().expected_write_id = "stale";
  const Status put = idx->Put(7, second);
  EXPECT_EQ(put.code(), StatusCode::kConflict) << put.ToString();
  std::vector<std::string> expected;
  for (int i = 0; i < kKeys; ++i) expected.push_back("a" + std::to_string(i));
  expected.back() = "stale";
  const Status del = idx->Delete(7, keys, expected);
  EXPECT_EQ(del.code(), StatusCode::kConflict) << del.ToString();
  auto records = idx->Get(keys);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE((*records)[i].has_value()) << "key " << keys[i] << " was deleted by a refused Delete";
    ASSERT_EQ((*records)[i]->at("f"), "old") << "key " << keys[i] << " of a refused Put was written";
  }
}

// The incident this rule exists for: write 'a' is sent twice (the first attempt only slow), write
// 'b' (which read 'a') lands in between; the late attempt of 'a' must not undo 'b'.
TEST_P(FenceContractTest, ALateAttemptOfAnAppliedWriteCannotUndoALaterOne) {
  std::unique_ptr<MetaIndexer> idx = Fresh(300, 0);
  ASSERT_NE(idx, nullptr);
  const MetaWrite start{"k", {{"status", "writing"}}, "a", ""};
  const MetaWrite finish{"k", {{"status", "serving"}}, "b", "a"};
  ASSERT_TRUE(idx->Put(3, std::span(&start, 1)).ok());
  ASSERT_TRUE(idx->Put(3, std::span(&finish, 1)).ok());
  const Status late = idx->Put(3, std::span(&start, 1));
  EXPECT_EQ(late.code(), StatusCode::kConflict) << late.ToString();
  std::optional<MetaRecord> record = RecordOfK(*idx);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->at("status"), "serving") << "the late attempt of the first write undid the second";
  EXPECT_TRUE(idx->Put(3, std::span(&finish, 1)).ok()) << "an attempt of the applied write, again, is done";
}

TEST(CheckWriteId, AppliesOnTheExpectedRecordOnlyAndCountsRepeatsDone) {
  EXPECT_EQ(CheckWriteId("x", "", ""), WriteIdVerdict::kApply) << "no write id: unconditional";
  EXPECT_EQ(CheckWriteId("", "", "a"), WriteIdVerdict::kApply) << "a new record where none was read";
  EXPECT_EQ(CheckWriteId("a", "a", "b"), WriteIdVerdict::kApply) << "the record read is still there";
  EXPECT_EQ(CheckWriteId("b", "a", "b"), WriteIdVerdict::kAlreadyApplied) << "an attempt of an applied write";
  EXPECT_EQ(CheckWriteId("c", "a", "b"), WriteIdVerdict::kConflict) << "the record changed since it was read";
  EXPECT_EQ(CheckWriteId("", "a", "b"), WriteIdVerdict::kConflict) << "the record read was deleted";
  EXPECT_EQ(CheckDeleteWriteId(false, "", "a"), WriteIdVerdict::kAlreadyApplied) << "deleted already";
  EXPECT_EQ(CheckDeleteWriteId(true, "b", "a"), WriteIdVerdict::kConflict) << "a newer record must stay";
}

TEST(WrittenAfter, OrdersWriteIdsByTermThenPlace) {
  EXPECT_EQ(MakeWriteId(7, 10), "w-7-10");
  EXPECT_TRUE(IsWriteId("w-7-10"));
  EXPECT_FALSE(IsWriteId("w-7")) << "no place";
  EXPECT_FALSE(IsWriteId("ws-7-10")) << "a session id is not a write id";
  EXPECT_TRUE(WrittenAfter("w-7-11", "w-7-10")) << "later in the same term";
  EXPECT_TRUE(WrittenAfter("w-7-100", "w-7-99")) << "numbers, not text";
  EXPECT_TRUE(WrittenAfter("w-8-1", "w-7-10")) << "a later term";
  EXPECT_FALSE(WrittenAfter("w-7-10", "w-7-10")) << "the delete's own id";
  EXPECT_FALSE(WrittenAfter("w-6-99", "w-7-10")) << "an earlier term";
  EXPECT_FALSE(WrittenAfter("", "w-7-10")) << "a record without an id was written before";
  EXPECT_FALSE(WrittenAfter("w-8-1", "")) << "no delete id: an unordered delete";
  EXPECT_TRUE(CheckDeleteArguments(1, 0, "w-1-1").ok());
  EXPECT_EQ(CheckDeleteArguments(2, 1, "").code(), StatusCode::kInvalidArgument) << "one expected id per key";
  EXPECT_EQ(CheckDeleteArguments(1, 0, "x").code(), StatusCode::kInvalidArgument) << "a delete id must be a write id";
}

TEST(CheckFence, RefusesOnlyOlderTokensAndKeepsTheNewest) {
  EXPECT_FALSE(CheckFence(5, 4).accepted);
  EXPECT_EQ(CheckFence(5, 4).newest, 5u) << "a refused write must not move the fence";
  EXPECT_TRUE(CheckFence(5, 5).accepted) << "the same term writing again";
  EXPECT_EQ(CheckFence(5, 7).newest, 7u) << "a newer token becomes the newest";
  EXPECT_TRUE(CheckFence(0, 0).accepted) << "an index that saw no token accepts anything";
}

INSTANTIATE_TEST_SUITE_P(Indexers, FenceContractTest, ::testing::Values("memory", "redis"),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace kvchaos::meta
