// io_submit errors (issue 18, upstream's catalogue): EINVAL and EBADF fail the attempt on its
// path at once — counted in the path's window, the shard retried on the next path; EAGAIN is
// tried again on the same path while the attempt's deadline leaves time (a transient one costs
// nothing), then counts the same way; without a deadline it is tried a bounded number of times.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <mutex>
#include <string>

#include "core/store/aio_engine.h"
#include "core/store/posix_store.h"
#include "core/store/tests/forwarding_aio_ops.h"
#include "core/store/tests/store_test_util.h"

namespace kvchaos::store {
namespace {

using testing::Backends;
using testing::BlockData;
using testing::IdWithPrimary;

// Real libaio, except that io_submit fails with `err` (the next `times` calls, -1: all) when the
// first iocb it is given is for a file under `prefix`; iocbs before such a one are submitted.
class SubmitErrorAioOps final : public testing::ForwardingAioOps {
 public:
  void Fail(std::string prefix, int err, int times) {
    std::lock_guard<std::mutex> lock(mu_);
    prefix_ = std::move(prefix);
    err_ = err;
    times_ = times;
  }
  int failed_submits() {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }

  int Submit(io_context_t ctx, long count, struct iocb** iocbs) override {
    long ok = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      while (ok < count && !(times_ != 0 && PathOf(iocbs[ok]->aio_fildes).rfind(prefix_, 0) == 0)) ++ok;
      if (ok == 0 && count > 0) {
        if (times_ > 0) --times_;
        ++failed_;
        return -err_;
      }
    }
    return ForwardingAioOps::Submit(ctx, ok, iocbs);
  }

 private:
  std::mutex mu_;
  std::string prefix_;
  int err_ = 0;
  int times_ = 0;
  int failed_ = 0;
};

class AioSubmitErrorTest : public ::testing::TestWithParam<int> {};

TEST_P(AioSubmitErrorTest, CountsAgainstThePathAndTheShardIsRetriedOnTheNext) {
  const int err = GetParam();
  Backends backends(3, /*shared=*/false);
  SubmitErrorAioOps aio;
  PosixStore store(PosixStoreDeps{.aio_ops = &aio});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, /*timeout_ms=*/300)).ok());
  aio.Fail(backends[1] + "/", err, -1);
  BlockData block(IdWithPrimary(1, 3), 1);  // two shards, both tried on path 1 first
  const Status dumped = testing::DumpAll(store, block);
  ASSERT_TRUE(dumped.ok()) << "io_submit " << ErrnoText(err) << " was not retried on the next path: "
                           << dumped.ToString();
  EXPECT_TRUE(std::filesystem::exists(BlockPath(backends[2], block.id)));
  EXPECT_FALSE(store.backends().available(1)) << "two failures (threshold 2) must exclude the path";
  const BackendIoCounts counts = store.backends().IoCounts(1);
  const auto by_errno = counts.errors_by_errno.find(err);
  const int64_t counted = (by_errno == counts.errors_by_errno.end() ? 0 : by_errno->second) + counts.attempt_timeouts;
  if (err == EAGAIN) {
    // An EAGAIN attempt may reach its deadline while it waits to submit again (a loaded machine):
    // the deadline report and the late io_submit failure are then two samples of that attempt.
    EXPECT_GE(store.backends().window(1).failures(), 2) << "each refused submit is a failure of the path";
    EXPECT_EQ(counted, store.backends().window(1).failures()) << "failures of path 1 by EAGAIN or deadline";
    EXPECT_GT(aio.failed_submits(), 2) << "EAGAIN must be tried again while the attempt's deadline allows";
  } else {
    EXPECT_EQ(store.backends().window(1).failures(), 2) << "each refused submit is a failure of the path";
    EXPECT_EQ(counted, 2) << "failures of path 1 by errno " << err;
    EXPECT_EQ(aio.failed_submits(), 2) << ErrnoText(err) << " must not be tried again on the same path";
  }
}

INSTANTIATE_TEST_SUITE_P(Errnos, AioSubmitErrorTest, ::testing::Values(EAGAIN, EINVAL, EBADF),
                         [](const auto& test) {
                           return std::string(test.param == EAGAIN ? "EAGAIN" : test.param == EINVAL ? "EINVAL" : "EBADF");
                         });

TEST(AioSubmitEagainTest, ATransientEagainIsTriedAgainOnTheSamePathAndCostsNothing) {
  Backends backends(3, /*shared=*/false);
  SubmitErrorAioOps aio;
  PosixStore store(PosixStoreDeps{.aio_ops = &aio});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, /*timeout_ms=*/3000)).ok());
  aio.Fail(backends[1] + "/", EAGAIN, 3);
  BlockData block(IdWithPrimary(1, 3), 1);
  ASSERT_TRUE(testing::DumpAll(store, block).ok());
  EXPECT_EQ(aio.failed_submits(), 3);
  EXPECT_TRUE(std::filesystem::exists(BlockPath(backends[1], block.id))) << "the block left its primary";
  EXPECT_EQ(store.backends().window(1).failures(), 0) << "an EAGAIN that passed in time is no failure";
  EXPECT_TRUE(store.backends().available(1));
}

TEST(AioSubmitEagainTest, WithoutADeadlineEagainIsTriedABoundedNumberOfTimes) {
  Backends backends(3, /*shared=*/false);
  SubmitErrorAioOps aio;
  PosixStore store(PosixStoreDeps{.aio_ops = &aio});
  ASSERT_TRUE(store.Setup(backends.Config(IoEngineKind::kAio, /*timeout_ms=*/0)).ok());
  aio.Fail(backends[1] + "/", EAGAIN, -1);
  BlockData block(IdWithPrimary(1, 3), 1);
  const Status dumped = testing::DumpAll(store, block);  // returns at all: the tries are bounded
  ASSERT_TRUE(dumped.ok()) << dumped.ToString();
  EXPECT_TRUE(std::filesystem::exists(BlockPath(backends[2], block.id)));
  EXPECT_GT(aio.failed_submits(), 2) << "EAGAIN must be tried again before the path is blamed";
  EXPECT_EQ(store.backends().window(1).failures(), 2);
}

}  // namespace
}  // namespace kvchaos::store
