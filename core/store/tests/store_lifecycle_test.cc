// PosixStore around its Setup and its end (issue 18, upstream's catalogue): a store that is not
// set up — never, or after a failed Setup — refuses every call and does no I/O; the probe file
// names of the startup checks and of every recovery probe never repeat (a peer or an earlier
// probe's left-over file is never reused); a shard that fails while the store is being destroyed
// is not retried on another path.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <set>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using testing::Backends;
using testing::BlockData;
using testing::Eventually;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::IdWithPrimary;
using testing::Op;

void ExpectRefusedWithoutIo(PosixStore& store, FaultFileOps& ops, const std::string& when) {
  SCOPED_TRACE(when);
  const size_t calls = ops.Calls().size();
  BlockData block(testing::MakeId(7), 7);
  const std::vector<BlockId> ids{block.id};
  const auto refused = [](const Status& s) {
    return s.code() == StatusCode::kInvalidArgument && s.message().find("before a successful Setup") != std::string::npos;
  };
  EXPECT_TRUE(refused(store.Dump(block.All()).status())) << store.Dump(block.All()).status().ToString();
  EXPECT_TRUE(refused(store.Load(block.All()).status()));
  EXPECT_TRUE(refused(store.Lookup(ids).status()));
  EXPECT_TRUE(refused(store.Remove(ids)));
  EXPECT_TRUE(refused(store.Presence(ids).status()));
  EXPECT_EQ(store.Wait(1).code(), StatusCode::kInvalidArgument) << "no handle exists before Setup";
  EXPECT_EQ(store.CheckHealth().code(), StatusCode::kStoreUnhealthy);
  store.Abandon(ids);  // a no-op, not a crash
  EXPECT_FALSE(store.Geometry().has_value());
  EXPECT_EQ(ops.Calls().size(), calls) << "a store that is not set up touched the file system";
}

TEST(StoreLifecycleTest, UseBeforeSetupIsRefusedAndDoesNoIo) {
  Backends backends(2, /*shared=*/false);
  FaultFileOps ops;
  PosixStore never(PosixStoreDeps{.file_ops = &ops});
  ExpectRefusedWithoutIo(never, ops, "never set up");

  PosixStore failed(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(IoEngineKind::kPsync);
  cfg.storage_backends.push_back((backends.root() / "missing").string());
  ASSERT_FALSE(failed.Setup(cfg).ok()) << "a missing backend must fail the startup check";
  ExpectRefusedWithoutIo(failed, ops, "after a failed Setup");
}

// Probe files opened so far (the startup checks' and the recovery probes'), in order.
std::vector<std::string> ProbeFilesOpened(FaultFileOps& ops) {
  std::vector<std::string> out;
  for (const auto& [op, path] : ops.Calls()) {
    if (op == Op::kOpen && std::filesystem::path(path).filename().string().rfind(".probe_", 0) == 0) {
      out.push_back(path);
    }
  }
  return out;
}

TEST(StoreLifecycleTest, ProbeFileNamesNeverRepeat) {
  Backends backends(2, /*shared=*/true);  // both paths reach one directory, as in production
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kPsync)).ok());
  ops.Add(FaultRule{.op = Op::kWrite, .prefix = backends[1] + "/", .err = EIO});  // p1's probes keep failing
  store.backends().Record(1, false, SampleSource::kBusiness);
  store.backends().Record(1, false, SampleSource::kBusiness);
  ASSERT_FALSE(store.backends().available(1));
  ASSERT_TRUE(Eventually([&] { return store.monitor().probes_run() >= 30; }));
  ops.Clear();  // the second store's startup check must pass
  {
    PosixStore second(PosixStoreDeps{.file_ops = &ops});  // another store on the same storage
    ASSERT_TRUE(second.Setup(backends.Config(IoEngineKind::kPsync)).ok());
  }
  std::vector<std::string> names;
  for (const std::string& path : ProbeFilesOpened(ops)) names.push_back(std::filesystem::path(path).filename());
  ASSERT_GE(names.size(), 30u + 4u);
  const std::set<std::string> distinct(names.begin(), names.end());
  EXPECT_EQ(distinct.size(), names.size()) << "a probe file name was used twice among " << names.size();
}

class StoreDestructionTest : public ::testing::TestWithParam<IoEngineKind> {};

TEST_P(StoreDestructionTest, AShardThatFailsWhileTheStoreIsDestroyedIsNotRetried) {
  Backends backends(3, /*shared=*/false);
  FaultFileOps ops;
  auto store = std::make_unique<PosixStore>(PosixStoreDeps{.file_ops = &ops});
  ASSERT_TRUE(store->Setup(backends.Config(GetParam(), /*timeout_ms=*/0)).ok());
  const int p1_opens = ops.Count(Op::kOpen, backends[1] + "/");
  // The primary's opens hang until released, then fail.
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[1] + "/", .err = EIO, .hang = true});
  BlockData block(IdWithPrimary(1, 3), 1);
  ASSERT_TRUE(store->Dump(block.All()).ok());
  ASSERT_TRUE(Eventually([&] { return ops.Count(Op::kOpen, backends[1] + "/") == p1_opens + 2; }))
      << "both shards' attempts must be hanging on the primary";
  const int elsewhere = ops.Count(Op::kOpen, backends[0] + "/") + ops.Count(Op::kOpen, backends[2] + "/");
  const int monitors = testing::ThreadsNamed("ucm_health_pmon");
  std::thread closer([&] { store.reset(); });
  // The destructor stops the recovery monitor first: once it is gone, destruction is under way.
  const bool closing = Eventually([&] { return testing::ThreadsNamed("ucm_health_pmon") == monitors - 1; });
  ops.Release();  // the hung attempts now fail with EIO
  closer.join();
  ASSERT_TRUE(closing) << "the store's destructor never stopped its monitor";
  EXPECT_EQ(ops.Count(Op::kOpen, backends[0] + "/") + ops.Count(Op::kOpen, backends[2] + "/"), elsewhere)
      << "a shard that failed during destruction was retried on another path";
  EXPECT_FALSE(std::filesystem::exists(BlockPath(backends[2], block.id)));
}

INSTANTIATE_TEST_SUITE_P(Engines, StoreDestructionTest, ::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio),
                         [](const auto& test) { return test.param == IoEngineKind::kAio ? "aio" : "psync"; });

}  // namespace
}  // namespace kvchaos::store
