// The store's metrics as an embedding service renders them: per path, its health and window, and
// what its I/O did — errors by errno, attempt timeouts, late completions, retries on other paths —
// counted as the faults happen (on the simulated disk, virtual time).
#include "core/store/store_metrics.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/common/metrics.h"
#include "core/store/posix_store.h"
#include "core/store/tests/store_test_util.h"
#include "sim/virtual_disk.h"

namespace kvchaos::store {
namespace {

using testing::BlockData;
using testing::ConfigFor;
using testing::DumpAll;
using testing::IdWithPrimary;
using testing::LoadAll;

std::string Render(PosixStore& store) {
  MetricsRegistry registry;
  WriteStoreMetrics(store, registry);
  return registry.Render();
}

void ExpectLine(const std::string& text, const std::string& line) {
  EXPECT_NE(text.find(line + "\n"), std::string::npos) << "no line '" << line << "' in:\n" << text;
}

TEST(StoreMetricsTest, IoErrorsByErrnoAndRetriesOnTheNextPathAreCounted) {
  sim::VirtualDisk disk(2, /*shared=*/true);
  ASSERT_EQ(disk.Run([&] {
              PosixStore store(disk.Deps());
              PosixStoreConfig cfg = ConfigFor(disk.paths(), IoEngineKind::kPsync);
              cfg.health.failure_threshold = 8;  // keep the failing path in the routing
              ASSERT_TRUE(store.Setup(cfg).ok());
              ASSERT_TRUE(disk.AddRule(0, "{id: eio, action: errno, errno: EIO, ops: [read]}").ok());
              for (uint64_t n = 0; n < 3; ++n) {
                BlockData block(IdWithPrimary(0, 2, n * 100), n);
                ASSERT_TRUE(DumpAll(store, block).ok());
                BlockData loaded(block.id, 0);
                ASSERT_TRUE(LoadAll(store, loaded).ok()) << "the read must fall back to the other path";
              }
              const std::string text = Render(store);
              // Two shards per block, each read failing once on p0 and retried on p1.
              ExpectLine(text, R"(kvchaos_store_backend_io_errors_total{backend="/sim/p0",errno="EIO"} 6)");
              ExpectLine(text, R"(kvchaos_store_backend_retries_total{backend="/sim/p1"} 6)");
              ExpectLine(text, R"(kvchaos_store_backend_retries_total{backend="/sim/p0"} 0)");
              EXPECT_EQ(text.find(R"(io_errors_total{backend="/sim/p1")"), std::string::npos)
                  << "the healthy path has no errors:\n" << text;
            }),
            "");
}

TEST(StoreMetricsTest, AttemptTimeoutsAndLateCompletionsAreCounted) {
  sim::VirtualDisk disk(2, /*shared=*/false);
  ASSERT_EQ(disk.Run([&] {
              PosixStore store(disk.Deps());
              ASSERT_TRUE(store.Setup(ConfigFor(disk.paths(), IoEngineKind::kAio, 2000)).ok());
              ASSERT_TRUE(disk.AddRule(0, "{id: hang, action: hang, ops: [write]}").ok());
              BlockData block(IdWithPrimary(0, 2), 3);
              const Status saved = DumpAll(store, block);
              const std::string while_hung = Render(store);
              ASSERT_TRUE(disk.RemoveRule(0, "hang").ok());
              ASSERT_TRUE(saved.ok()) << saved.ToString();
              ExpectLine(while_hung, R"(kvchaos_store_backend_attempt_timeouts_total{backend="/sim/p0"} 2)");
              ExpectLine(while_hung, R"(kvchaos_store_backend_late_completions_total{backend="/sim/p0"} 0)");
              ASSERT_TRUE(sim::WaitUntilHolds(disk.runtime(), [&] {
                return Render(store).find(R"(late_completions_total{backend="/sim/p0"} 2)") != std::string::npos;
              })) << "the released writes must be counted as late completions:\n" << Render(store);
              ExpectLine(Render(store), R"(kvchaos_store_backend_retries_total{backend="/sim/p1"} 2)");
            }),
            "");
}

}  // namespace
}  // namespace kvchaos::store
