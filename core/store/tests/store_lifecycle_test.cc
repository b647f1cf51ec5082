// PosixStore around its Setup (issue 18, upstream's catalogue): a store that is not set up — never,
// or after a failed Setup — refuses every call and does no I/O; the probe file names of the
// startup checks and of every recovery probe never repeat (a peer or an earlier probe's left-over
// file is never reused).
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <set>
#include <string>
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

}  // namespace
}  // namespace kvchaos::store
