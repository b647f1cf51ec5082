// The simulated disk: a storage's power-loss rules, and the production PosixStore (psync and aio
// engines, health window, attempt timeouts, durable commits) running over it on virtual time with
// faultfs rules on one of three paths to one storage.
#include "sim/sim_disk.h"
#include "sim/virtual_disk.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "core/store/aligned_buffer.h"
#include "core/store/posix_store.h"
#include "sim/data_workload.h"

namespace kvchaos::sim {
namespace {

using store::AlignedBuffer;
using store::BlockId;
using store::IoEngineKind;
using store::PosixStore;
using store::PosixStoreConfig;

TEST(SimStorageTest, APowerLossKeepsOnlyWhatWasSynced) {
  SimStorage s(1);
  ASSERT_EQ(s.MakeDir("d"), 0);
  uint64_t kept = 0;
  uint64_t lost = 0;
  ASSERT_EQ(s.CreateFile("d/kept", &kept), 0);
  ASSERT_EQ(s.CreateFile("d/lost", &lost), 0);
  const uint8_t bytes[4] = {1, 2, 3, 4};
  ASSERT_EQ(s.Write(kept, 0, bytes), 0);
  ASSERT_EQ(s.Write(lost, 0, bytes), 0);
  ASSERT_EQ(s.Sync(kept), 0);
  uint64_t dir = 0;
  bool is_dir = false;
  ASSERT_EQ(s.Lookup("d", &dir, &is_dir), 0);
  ASSERT_EQ(s.Sync(1), 0);    // the root names d
  ASSERT_EQ(s.Sync(dir), 0);  // d names both files
  ASSERT_EQ(s.Write(kept, 4, bytes), 0);  // after the sync: lost in the crash
  ASSERT_EQ(s.Rename("d/kept", "d/renamed"), 0);  // not synced: the old name stays
  s.Crash();
  uint64_t inode = 0;
  ASSERT_EQ(s.Lookup("d/kept", &inode, &is_dir), 0) << "an unsynced rename must not survive a power loss";
  uint64_t size = 0;
  ASSERT_EQ(s.Size(inode, &size), 0);
  EXPECT_EQ(size, 4u) << "only the bytes synced before the crash remain";
  EXPECT_EQ(s.Lookup("d/renamed", &inode, &is_dir), ENOENT);
  ASSERT_EQ(s.Lookup("d/lost", &inode, &is_dir), 0) << "a durable name survives";
  ASSERT_EQ(s.Size(inode, &size), 0);
  EXPECT_EQ(size, 0u) << "a file never synced comes back empty";
  EXPECT_FALSE(s.Exists(0));
}

TEST(SimStorageTest, WritesOverwriteExtendAndLeaveHolesOfZeros) {
  SimStorage s(1);
  uint64_t f = 0;
  ASSERT_EQ(s.CreateFile("f", &f), 0);
  const uint8_t abcd[4] = {'a', 'b', 'c', 'd'};
  const uint8_t xy[2] = {'x', 'y'};
  ASSERT_EQ(s.Write(f, 0, abcd), 0);
  ASSERT_EQ(s.Write(f, 3, xy), 0);  // overwrites d, appends y
  ASSERT_EQ(s.Write(f, 1, xy), 0);  // inside the file: no growth
  ASSERT_EQ(s.Write(f, 7, xy), 0);  // past the end: a hole at 5..6
  uint8_t got[9] = {};
  ASSERT_EQ(s.Read(f, 0, got), 9) << "the file must end at the last byte written";
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(got), 9), std::string("axyxy\0\0xy", 9))
      << "writes must overwrite in place, extend at the end, and leave zeros in a hole";
}

TEST(SimStorageTest, ANameNeverSyncedVanishesWithItsDirectory) {
  SimStorage s(1);
  ASSERT_EQ(s.MakeDir("shard"), 0);
  uint64_t f = 0;
  ASSERT_EQ(s.CreateFile("shard/block", &f), 0);
  ASSERT_EQ(s.Sync(f), 0);  // the data is durable, no name of it is
  s.Crash();
  uint64_t inode = 0;
  bool is_dir = false;
  EXPECT_EQ(s.Lookup("shard", &inode, &is_dir), ENOENT) << "a directory whose parent was never synced is gone";
  EXPECT_EQ(s.file_count(), 0u);
}

TEST(SimStorageTest, AFileNothingCanReachIsFreed) {
  SimStorage s(1);
  ASSERT_EQ(s.MakeDir("d"), 0);
  uint64_t tmp = 0;
  ASSERT_EQ(s.CreateFile("d/tmp", &tmp), 0);
  ASSERT_EQ(s.Unlink("d/tmp"), 0);
  EXPECT_FALSE(s.Exists(tmp)) << "an unlinked file that no durable name and no descriptor keeps must be freed";
  EXPECT_EQ(s.file_count(), 0u);

  uint64_t open = 0;
  ASSERT_EQ(s.CreateFile("d/open", &open), 0);
  s.Hold(open);
  ASSERT_EQ(s.Unlink("d/open"), 0);
  const uint8_t bytes[4] = {1, 2, 3, 4};
  EXPECT_EQ(s.Write(open, 0, bytes), 0) << "an open file must stay usable after its unlink";
  s.Release(open);
  EXPECT_FALSE(s.Exists(open)) << "the last close of an unlinked file must free it";
}

TEST(SimStorageTest, AReplacedFileLivesUntilItsDurableNameGoes) {
  SimStorage s(1);
  ASSERT_EQ(s.MakeDir("d"), 0);
  uint64_t dir = 0;
  bool is_dir = false;
  ASSERT_EQ(s.Lookup("d", &dir, &is_dir), 0);
  uint64_t old_block = 0;
  ASSERT_EQ(s.CreateFile("d/block", &old_block), 0);
  const uint8_t old_bytes[4] = {1, 1, 1, 1};
  ASSERT_EQ(s.Write(old_block, 0, old_bytes), 0);
  ASSERT_EQ(s.Sync(old_block), 0);
  ASSERT_EQ(s.Sync(1), 0);
  ASSERT_EQ(s.Sync(dir), 0);  // d/block names old_block durably
  uint64_t new_block = 0;
  ASSERT_EQ(s.CreateFile("d/block.tmp", &new_block), 0);
  ASSERT_EQ(s.Rename("d/block.tmp", "d/block"), 0);
  EXPECT_TRUE(s.Exists(old_block)) << "a crash before the directory's sync brings the old file back: it must be kept";
  ASSERT_EQ(s.Sync(dir), 0);
  EXPECT_FALSE(s.Exists(old_block)) << "once the directory's sync drops its last durable name, the old file must go";
  EXPECT_TRUE(s.Exists(new_block));
  EXPECT_EQ(s.file_count(), 1u);
  s.Crash();
  uint64_t inode = 0;
  ASSERT_EQ(s.Lookup("d/block", &inode, &is_dir), 0);
  EXPECT_EQ(inode, new_block) << "the durable rename must survive the crash";
}

TEST(SimStorageTest, ADurableFileOpenAtACrashIsFreedAtItsClose) {
  SimStorage s(1);
  uint64_t f = 0;
  ASSERT_EQ(s.CreateFile("f", &f), 0);
  ASSERT_EQ(s.Sync(1), 0);
  s.Hold(f);
  s.Crash();
  ASSERT_EQ(s.Unlink("f"), 0);
  ASSERT_EQ(s.Sync(1), 0);
  EXPECT_TRUE(s.Exists(f)) << "a descriptor opened before the crash still holds the file";
  s.Release(f);
  EXPECT_FALSE(s.Exists(f));
}

// A world of one client host with the production PosixStore over three mounts of one storage.
class SimStoreTest : public ::testing::TestWithParam<IoEngineKind> {
 protected:
  void SetUp() override { spdlog::set_level(spdlog::level::off); }
  void TearDown() override { spdlog::set_level(spdlog::level::info); }

  PosixStoreConfig Config(bool durable = false) const {
    PosixStoreConfig c;
    c.storage_backends = vd_.paths();
    c.io_engine = GetParam();
    c.io_direct = GetParam() == IoEngineKind::kAio;
    c.timeout_ms = 300;
    c.block_size = 2 * 4096;
    c.shard_size = 4096;
    c.tensor_size = 4096;
    c.concurrency = 4;
    c.durable_commit = durable;
    c.shard_dirs_at_setup = false;  // 3 x 4096 mkdirs per store; the world's stores skip them too
    c.health.health_check_interval_s = 0.5;
    c.health.health_check_timeout_s = 0.2;
    return c;
  }
  // Runs `body` with a set-up store on a simulated thread of the client host.
  void WithStore(const PosixStoreConfig& config, const std::function<void(PosixStore&)>& body) {
    const std::string unfinished = vd_.Run(
        [&] {
          PosixStore store(vd_.Deps());
          Status s = store.Setup(config);
          ASSERT_TRUE(s.ok()) << s.ToString();
          body(store);
        },
        std::chrono::minutes(10));
    EXPECT_EQ(unfinished, "") << "the store's thread did not finish";
  }
  void AddRule(int path, const std::string& yaml) {
    const Status added = vd_.AddRule(path, yaml);
    ASSERT_TRUE(added.ok()) << added.ToString();
  }
  SimStorage& Shared() { return *vd_.disk().storage("shared"); }

  VirtualDisk vd_{3, /*shared=*/true, 42};
};

BlockId Id(uint64_t n) {
  BlockId id;
  for (int i = 0; i < 8; ++i) id.bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(n >> (8 * i));
  id.bytes[15] = 0x5a;
  return id;
}

// A block of two 4 KiB shards whose bytes are a function of (n, version).
struct Block {
  Block(uint64_t n, uint64_t version) : id(Id(n)) {
    for (auto& shard : shards) {
      for (size_t i = 0; i < shard.size(); ++i) {
        shard.data()[i] = static_cast<std::byte>((n * 131 + version * 31 + i * 7 + (&shard - shards)) & 0xff);
      }
    }
  }
  store::TransferTask Task() {
    store::TransferTask task;
    for (uint32_t s = 0; s < 2; ++s) task.shards.push_back(store::Shard{id, s, {{shards[s].data(), shards[s].size()}}});
    return task;
  }
  bool SameAs(const Block& other) const {
    for (int s = 0; s < 2; ++s) {
      if (std::memcmp(shards[s].data(), other.shards[s].data(), shards[s].size()) != 0) return false;
    }
    return true;
  }
  BlockId id;
  AlignedBuffer shards[2] = {AlignedBuffer(4096), AlignedBuffer(4096)};
};

Status Dump(PosixStore& store, Block& b) {
  auto h = store.Dump(b.Task());
  return h.ok() ? store.Wait(*h) : h.status();
}

Status Load(PosixStore& store, Block& b) {
  auto h = store.Load(b.Task());
  return h.ok() ? store.Wait(*h) : h.status();
}

// Dumps and reads back blocks [first, first + count); the first failure as a message, "" if none.
std::string RoundTrip(PosixStore& store, uint64_t first, int count) {
  for (uint64_t n = first; n < first + static_cast<uint64_t>(count); ++n) {
    Block written(n, 1);
    if (Status s = Dump(store, written); !s.ok()) return "dump of block " + std::to_string(n) + ": " + s.ToString();
    Block read(n, 999);
    if (Status s = Load(store, read); !s.ok()) return "load of block " + std::to_string(n) + ": " + s.ToString();
    if (!read.SameAs(written)) return "block " + std::to_string(n) + " came back different";
  }
  return "";
}

TEST_P(SimStoreTest, BlocksRoundTripOverTheSimulatedDisk) {
  WithStore(Config(), [&](PosixStore& store) {
    EXPECT_EQ(RoundTrip(store, 0, 30), "");
    EXPECT_TRUE(store.CheckHealth().ok());
  });
  EXPECT_EQ(vd_.files().open_files(), 0u) << "every file the store opened must be closed";
  EXPECT_GT(Shared().file_count(), 29u) << "the blocks must be on the shared storage";
}

TEST_P(SimStoreTest, AnEioPathIsExcludedAndBlocksGoToTheOthers) {
  WithStore(Config(), [&](PosixStore& store) {
    AddRule(1, R"({id: eio, action: errno, errno: EIO, ops: [open, create, read, write]})");
    EXPECT_EQ(RoundTrip(store, 100, 40), "") << "reads and writes must fall back to the healthy paths";
    EXPECT_FALSE(store.backends().available(1)) << "two failures in the window must exclude the EIO path";
    EXPECT_TRUE(store.backends().available(0));
    EXPECT_TRUE(store.backends().available(2));
  });
}

TEST_P(SimStoreTest, AHungPathTimesOutAndTheAttemptMovesOn) {
  WithStore(Config(), [&](PosixStore& store) {
    AddRule(2, R"({id: hang, action: hang, ops: [write, read]})");
    EXPECT_EQ(RoundTrip(store, 200, 12), "") << "a hung path must cost one attempt timeout, not the block";
    EXPECT_FALSE(store.backends().available(2)) << "timed-out attempts count as failures of their path";
    EXPECT_GE(vd_.runtime().true_now(), store.attempt_timeout().count()) << "the hang must have cost an attempt timeout";
    // Late completions must end before the store goes; releasing the hang lets them.
    ASSERT_TRUE(vd_.RemoveRule(2, "hang").ok());
  });
}

TEST_P(SimStoreTest, APowerLossLosesUnsyncedBlocksAsMissesAndKeepsDurableOnes) {
  for (bool durable : {false, true}) {
    SCOPED_TRACE(durable ? "durable_commit: true" : "durable_commit: false");
    WithStore(Config(durable), [&](PosixStore& store) {
      const uint64_t first = durable ? 1000 : 2000;
      ASSERT_EQ(RoundTrip(store, first, 10), "");
      Shared().Crash();
      int intact = 0;
      for (uint64_t n = first; n < first + 10; ++n) {
        Block written(n, 1);
        Block read(n, 999);
        Status s = Load(store, read);
        if (s.ok()) {
          EXPECT_TRUE(read.SameAs(written)) << "block " << n << " was returned after the crash with other bytes";
          ++intact;
        } else {
          EXPECT_EQ(s.code(), StatusCode::kNotFound) << "a lost block must be a miss: " << s.ToString();
        }
      }
      EXPECT_EQ(intact, durable ? 10 : 0) << "acknowledged durable blocks must survive; cached ones do not";
      EXPECT_TRUE(store.CheckHealth().ok()) << "misses after a crash are not failures of the paths";
    });
  }
}

TEST_P(SimStoreTest, AMisdirectedReadReturnsAnotherBlocksBytesAndIsCounted) {
  WithStore(Config(), [&](PosixStore& store) {
    ASSERT_EQ(RoundTrip(store, 300, 4), "");
    // Block files only (<3 hex>/<32 hex>): temp and probe files have longer names.
    for (int p = 0; p < 3; ++p) {
      AddRule(p, std::string("{id: mis, action: misdirected_read, source: \"") + kBlockFileGlob + "\"}");
    }
    Block written(300, 1);
    Block read(300, 999);
    ASSERT_TRUE(Load(store, read).ok()) << "a misdirected read is no error: the store gets whole bytes";
    EXPECT_FALSE(read.SameAs(written)) << "block 300's own bytes came back despite the rule";
    for (int shard = 0; shard < 2; ++shard) {
      bool from_another = false;
      for (uint64_t n = 301; n < 304; ++n) {
        Block other(n, 1);
        from_another |= std::memcmp(read.shards[shard].data(), other.shards[shard].data(), 4096) == 0;
      }
      EXPECT_TRUE(from_another) << "shard " << shard << " must be the same shard of another block";
    }
    uint64_t misdirected = 0;
    for (const std::string& path : vd_.paths()) misdirected += vd_.disk().mount(path)->misdirected_reads;
    EXPECT_GE(misdirected, 2u) << "each shard read was misdirected and counted";
  });
}

TEST_P(SimStoreTest, TheSameSeedReplaysTheSameTrace) {
  auto run = [&] {
    VirtualDisk vd(3, /*shared=*/true, 9);
    const std::string unfinished = vd.Run([&] {
      PosixStore store(vd.Deps());
      ASSERT_TRUE(store.Setup(Config()).ok());
      ASSERT_TRUE(vd.AddRule(0, R"({id: flaky, action: errno, errno: EIO, probability: 0.3})").ok());
      (void)RoundTrip(store, 0, 20);
    });
    EXPECT_EQ(unfinished, "");
    EXPECT_GT(vd.runtime().trace().events(), 1000u) << "the run did too little to compare";
    return vd.runtime().trace().hash();
  };
  EXPECT_EQ(run(), run());
}

INSTANTIATE_TEST_SUITE_P(Engines, SimStoreTest, ::testing::Values(IoEngineKind::kPsync, IoEngineKind::kAio),
                         [](const auto& p) { return p.param == IoEngineKind::kAio ? "aio" : "psync"; });

}  // namespace
}  // namespace kvchaos::sim
