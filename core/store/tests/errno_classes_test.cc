// Upstream's errno classes (issue 18): every errno of upstream's list but ENOENT (a miss, see
// PosixStoreEngineTest.NotFoundIsAMissWithoutRetryOrSample) is a failure of the path — counted in
// its window, retried on the next path, and enough of them exclude it — for reads and writes, on
// both engines. One case per errno × engine.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using testing::Backends;
using testing::BlockData;
using testing::FaultFileOps;
using testing::FaultRule;
using testing::IdWithPrimary;
using testing::Op;
using testing::PlaceBlock;

struct NamedErrno {
  int value;
  const char* name;
};
void PrintTo(const NamedErrno& e, std::ostream* os) { *os << e.name; }
constexpr NamedErrno kUpstreamFailureErrnos[] = {
    {EIO, "EIO"},       {ENOSPC, "ENOSPC"}, {EROFS, "EROFS"}, {EACCES, "EACCES"},
    {EPERM, "EPERM"},   {ENXIO, "ENXIO"},   {ENODEV, "ENODEV"}, {EBADF, "EBADF"},
    {EINVAL, "EINVAL"}, {ETIMEDOUT, "ETIMEDOUT"}, {ENOMEM, "ENOMEM"},
};

class ErrnoClassTest : public ::testing::TestWithParam<std::tuple<IoEngineKind, NamedErrno>> {};

TEST_P(ErrnoClassTest, CountsAgainstThePathAndIsRetriedOnTheNext) {
  const auto [engine, err] = GetParam();
  Backends backends(3, /*shared=*/false);
  FaultFileOps ops;
  PosixStore store(PosixStoreDeps{.file_ops = &ops});
  PosixStoreConfig cfg = backends.Config(engine);
  cfg.block_size = cfg.shard_size;  // one shard per block: one attempt per task on the primary
  ASSERT_TRUE(store.Setup(cfg).ok());
  ops.Add(FaultRule{.op = Op::kOpen, .prefix = backends[1] + "/", .err = err.value});

  // A write whose primary (path 1) fails with the errno lands on path 2.
  BlockData written(IdWithPrimary(1, 3, 0), 1, /*shards=*/1);
  const Status dumped = testing::DumpAll(store, written);
  ASSERT_TRUE(dumped.ok()) << err.name << " on the primary was not retried on the next path: " << dumped.ToString();
  EXPECT_TRUE(std::filesystem::exists(BlockPath(backends[2], written.id)));
  EXPECT_EQ(store.backends().window(1).failures(), 1) << "a write failing with " << err.name << " was not counted";

  // A read failing with it on the primary is served by the next path, which holds a copy.
  BlockData placed(IdWithPrimary(1, 3, 500), 2, /*shards=*/1);
  PlaceBlock(backends[1], placed);
  PlaceBlock(backends[2], placed);
  BlockData loaded(placed.id, 0, /*shards=*/1);
  const Status read = testing::LoadAll(store, loaded);
  ASSERT_TRUE(read.ok()) << err.name << " on a read was not retried on the next path: " << read.ToString();
  EXPECT_TRUE(loaded.Equals(placed));

  EXPECT_FALSE(store.backends().available(1))
      << "two failures with " << err.name << " (threshold 2) must exclude the path";
  EXPECT_EQ(store.backends().IoCounts(1).errors_by_errno[err.value], 2) << "errors of path 1 by errno";
}

INSTANTIATE_TEST_SUITE_P(
    UpstreamList, ErrnoClassTest,
    ::testing::Combine(::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio),
                       ::testing::ValuesIn(kUpstreamFailureErrnos)),
    [](const auto& test) {
      return std::string(std::get<0>(test.param) == IoEngineKind::kAio ? "aio_" : "psync_") +
             std::get<1>(test.param).name;
    });

}  // namespace
}  // namespace kvchaos::store
