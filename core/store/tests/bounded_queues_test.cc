// Every queue of the store has a bound, and a test that hits it: the engines' pickup queues refuse
// past max_queued (an Unavailable that is no backend's fault), the aio callback queue makes the
// reaper wait for a slow callback thread, and PosixStore refuses a Dump/Load past
// max_inflight_shards shards in flight or max_pending_tasks handles never waited on — with nothing
// started and the health windows untouched.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <vector>

#include "core/store/aio_engine.h"
#include "core/store/posix_store.h"
#include "core/store/psync_engine.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/store_test_util.h"
#include "testing/temp_dir.h"

namespace kvchaos::store {
namespace {

using namespace std::chrono_literals;
using testing::Backends;
using testing::BlockData;
using testing::Eventually;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::Op;

// Outcomes of engine attempts, filled in by their done callbacks.
struct Outcomes {
  std::mutex mu;
  std::vector<Status> on_time;
  void Add(Status s) {
    std::lock_guard<std::mutex> lock(mu);
    on_time.push_back(std::move(s));
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return on_time.size();
  }
  int Count(bool (*pred)(const Status&)) {
    std::lock_guard<std::mutex> lock(mu);
    int n = 0;
    for (const Status& s : on_time) n += pred(s) ? 1 : 0;
    return n;
  }
};

// A 4096-byte file to read, and read attempts of it.
class ReadFile {
 public:
  ReadFile() : path_((dir_.path() / "f").string()), buffer_(std::make_shared<AlignedBuffer>(4096)) {
    std::ofstream(path_) << std::string(4096, 'x');
  }
  const std::string& path() const { return path_; }
  std::shared_ptr<IoRequest> Request(std::function<void(Status, bool)> done) {
    auto r = std::make_shared<IoRequest>();
    r->direction = IoDirection::kRead;
    r->backend = dir_.str();
    r->path = path_;
    r->length = 4096;
    r->iov.push_back({buffer_->data(), 4096});
    r->keepalive = buffer_;
    r->done = std::move(done);
    return r;
  }

 private:
  kvchaos::testing::TempDir dir_{"kvchaos_bounds"};
  std::string path_;
  std::shared_ptr<AlignedBuffer> buffer_;
};

bool IsRefusal(const Status& s) { return IsQueueFull(s); }
bool IsOk(const Status& s) { return s.ok(); }

// One worker hung in an open, `max_queued` attempts behind it: the next one is refused at once.
void ExpectQueueBound(IoEngine& engine, FaultFileOps& ops, ReadFile& file, size_t max_queued) {
  Outcomes outcomes;
  auto record = [&outcomes](Status s, bool on_time) {
    if (on_time) outcomes.Add(std::move(s));
  };
  engine.Submit(file.Request(record));
  ASSERT_TRUE(Eventually([&] { return ops.Count(Op::kOpen, file.path()) == 1; })) << "the first attempt never started";
  for (size_t i = 0; i < max_queued; ++i) engine.Submit(file.Request(record));
  EXPECT_EQ(outcomes.size(), 0u) << "attempts within the bound must wait, not fail";
  engine.Submit(file.Request(record));
  ASSERT_EQ(outcomes.size(), 1u) << "the attempt past the bound must be answered at once";
  EXPECT_TRUE(IsQueueFull(outcomes.on_time[0])) << outcomes.on_time[0].ToString();
  EXPECT_EQ(outcomes.on_time[0].code(), StatusCode::kUnavailable);
  EXPECT_NE(outcomes.on_time[0].message().find(std::to_string(max_queued) + " attempts already wait"), std::string::npos)
      << outcomes.on_time[0].ToString();
  ops.Release();
  ASSERT_TRUE(Eventually([&] { return outcomes.size() == max_queued + 2; }));
  EXPECT_EQ(outcomes.Count(IsOk), static_cast<int>(max_queued) + 1) << "every admitted attempt must still succeed";
  EXPECT_EQ(outcomes.Count(IsRefusal), 1);
}

TEST(BoundedQueuesTest, PsyncQueueRefusesPastItsBound) {
  FaultFileOps ops;
  ReadFile file;
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = file.path(), .hang = true, .times = 1});
  PsyncEngine engine(Runtime::Real(), ops, /*concurrency=*/1, /*max_queued=*/3);
  ExpectQueueBound(engine, ops, file, 3);
  engine.Stop();
}

TEST(BoundedQueuesTest, AioQueueRefusesPastItsBound) {
  FaultFileOps ops;
  ReadFile file;
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = file.path(), .hang = true, .times = 1});
  auto engine = AioEngine::Create(Runtime::Real(), ops, AioOps::Real(), /*concurrency=*/1, /*max_queued=*/3);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ExpectQueueBound(**engine, ops, file, 3);
  (*engine)->Stop();
}

TEST(BoundedQueuesTest, AioCallbackQueueMakesTheReaperWaitForASlowCallbackThread) {
  FaultFileOps ops;
  ReadFile file;
  auto created = AioEngine::Create(Runtime::Real(), ops, AioOps::Real(), /*concurrency=*/1);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  AioEngine& engine = **created;
  // The first callback blocks the completion thread (a rename on a hung path, say).
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> done{0};
  constexpr int kAttempts = 200;
  for (int i = 0; i < kAttempts; ++i) {
    engine.Submit(file.Request([&, i](Status, bool on_time) {
      if (!on_time) return;
      if (i == 0) {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return open; });
      }
      ++done;
    }));
  }
  ASSERT_TRUE(Eventually([&] { return engine.queue_stats().completion_waits > 0; }))
      << "completions piled up behind a blocked callback thread without back-pressure";
  const AioQueueStats held = engine.queue_stats();
  EXPECT_LT(held.completions_max, static_cast<uint64_t>(kAttempts)) << "the callback queue was not bounded";
  {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
  ASSERT_TRUE(Eventually([&] { return done.load() == kAttempts; })) << "attempts were lost under back-pressure";
  EXPECT_EQ(engine.queue_stats().completions_max, held.completions_max) << "the bound moved after the release";
  engine.Stop();
}

class StoreBoundsTest : public ::testing::TestWithParam<IoEngineKind> {};

TEST_P(StoreBoundsTest, ShardsInFlightPastTheBoundAreRefusedWithNothingStarted) {
  Backends backends(1, false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(GetParam());
  cfg.max_inflight_shards = 3;
  ASSERT_TRUE(store.Setup(cfg).ok());
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[0] + "/", .hang = true});
  BlockData a(testing::MakeId(1), 1), b(testing::MakeId(2), 2), c(testing::MakeId(3), 3, /*shards=*/4);
  Result<TaskHandle> first = store.Dump(a.All());  // 2 shards, held in open
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const int opens_before = ops.Count(Op::kOpen, backends[0] + "/");

  Result<TaskHandle> second = store.Dump(b.All());  // 2 more: 4 > 3
  ASSERT_FALSE(second.ok()) << "a Dump past max_inflight_shards must be refused";
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable) << second.status().ToString();
  EXPECT_NE(second.status().message().find("2 shards in flight"), std::string::npos) << second.status().ToString();
  EXPECT_NE(second.status().message().find("max_inflight_shards (3)"), std::string::npos) << second.status().ToString();
  Result<TaskHandle> huge = store.Dump(c.All());  // 4 shards can never fit
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kInvalidArgument) << huge.status().ToString();

  ops.Release();
  EXPECT_TRUE(store.Wait(*first).ok());
  EXPECT_EQ(store.backends().window(0).failures(), 0) << "a refusal is no backend failure";
  EXPECT_GE(ops.Count(Op::kOpen, backends[0] + "/"), opens_before);
  Result<TaskHandle> again = store.Dump(b.All());
  ASSERT_TRUE(again.ok()) << "the budget must come back when shards finish: " << again.status().ToString();
  EXPECT_TRUE(store.Wait(*again).ok());
  BlockData loaded(b.id, 0);
  EXPECT_TRUE(testing::LoadAll(store, loaded).ok());
  EXPECT_TRUE(loaded.Equals(b));
}

TEST_P(StoreBoundsTest, HandlesNeverWaitedOnAreBounded) {
  Backends backends(1, false);
  PosixStore store;
  PosixStoreConfig cfg = backends.Config(GetParam());
  cfg.max_pending_tasks = 3;
  ASSERT_TRUE(store.Setup(cfg).ok());
  std::vector<std::unique_ptr<BlockData>> blocks;
  std::vector<TaskHandle> handles;
  for (int i = 0; i < 3; ++i) {
    blocks.push_back(std::make_unique<BlockData>(testing::MakeId(10 + i), 10 + i));
    Result<TaskHandle> h = store.Dump(blocks.back()->All());
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    handles.push_back(*h);
  }
  BlockData extra(testing::MakeId(20), 20);
  Result<TaskHandle> refused = store.Dump(extra.All());
  ASSERT_FALSE(refused.ok()) << "a caller that never waits must not grow the task map without limit";
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("3 task handles not yet waited on (max_pending_tasks 3)"), std::string::npos)
      << refused.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(BlockTmpPath(backends[0], extra.id))) << "a refused task started I/O";
  EXPECT_TRUE(store.Wait(handles[0]).ok());
  Result<TaskHandle> accepted = store.Dump(extra.All());
  ASSERT_TRUE(accepted.ok()) << "a Wait must free a handle's place: " << accepted.status().ToString();
  EXPECT_TRUE(store.Wait(*accepted).ok());
  EXPECT_TRUE(store.Wait(handles[1]).ok());
  EXPECT_TRUE(store.Wait(handles[2]).ok());
}

INSTANTIATE_TEST_SUITE_P(Engines, StoreBoundsTest, ::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio),
                         [](const ::testing::TestParamInfo<IoEngineKind>& p) { return p.param == IoEngineKind::kAio ? "aio" : "psync"; });

}  // namespace
}  // namespace kvchaos::store
