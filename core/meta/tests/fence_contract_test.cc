// One fence rule (core/meta/fence.h), checked the same way on every meta indexer: the local one
// (which calls CheckFence) and Redis (whose Lua script re-states it on the server, run here on a
// real redis-server). Each case brings a fresh index's fence to `newest`, then writes with
// `token` through one operation; the outcome and the newest token after it must be CheckFence's.
#include "core/meta/fence.h"

#include <gtest/gtest.h>

#include <memory>
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
