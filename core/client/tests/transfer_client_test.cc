// End to end over real files: TransferClient + a real PosixStore on temp dirs + the in-process
// meta service. Save, flip one byte of one stored block file, Load: ChecksumMismatch for exactly
// that block (counted, logged, passed to the callback), the other blocks load and verify. Also:
// old data without checksums, failed Puts report no checksums, caller checksums (WRITE_INPUT),
// the meta round trip, and configs the client must refuse. IOV layouts: Save records each block's,
// a Load cut another way is a layout mismatch (not a checksum mismatch), and Scrub reads each
// block with its stored layout, assuming one only for records without.
#include "core/client/transfer_client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

#include "core/common/rng.h"
#include "core/common/thread_util.h"
#include "core/meta/local_meta_indexer.h"
#include "core/store/block_id.h"
#include "core/store/posix_store.h"
#include "core/store/tests/fault_file_ops.h"
#include "testing/temp_dir.h"

namespace kvchaos::client {
namespace {

using integrity::ChecksumAlgo;
using kvchaos::testing::TempDir;

constexpr uint64_t kShard = 16 << 10;
constexpr uint64_t kBlock = 2 * kShard;

// One block's bytes and its IOVs: 5 IOVs of uneven sizes, so IOVs straddle the shard boundary.
struct OwnedBlock {
  std::vector<std::byte> bytes;
  BlockBuffers iovs;
  explicit OwnedBlock(Rng& rng) : bytes(kBlock) {
    for (auto& b : bytes) b = static_cast<std::byte>(rng.NextU64());
    const size_t cuts[] = {0, 1000, 9000, 17000, 30000, kBlock};
    for (size_t i = 0; i + 1 < std::size(cuts); ++i) {
      iovs.push_back(std::span<std::byte>(bytes).subspan(cuts[i], cuts[i + 1] - cuts[i]));
    }
  }
};

struct Blocks {
  std::vector<std::unique_ptr<OwnedBlock>> owned;
  std::vector<BlockBuffers> views;
  Blocks(Rng& rng, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      owned.push_back(std::make_unique<OwnedBlock>(rng));
      views.push_back(owned.back()->iovs);
    }
  }
};

// OwnedBlock's IOV sizes: the writer's layout.
const std::vector<uint64_t> kWriterLayout{1000, 8000, 8000, 13000, kBlock - 30000};
const std::string kWriterLayoutText = "1 x 1000 + 2 x 8000 + 1 x 13000 + 1 x 2768 bytes";

// The same bytes as `blocks`, cut into one IOV per block (another layout than the writer's).
std::vector<BlockBuffers> OneIovEach(Blocks& blocks) {
  std::vector<BlockBuffers> out;
  for (auto& b : blocks.owned) out.push_back({std::span<std::byte>(b->bytes)});
  return out;
}

// The meta service as seen through a writer that sends other layouts than it computed: none (a
// client from before layouts were stored) or a fixed one (a corrupt record).
class LayoutRewritingMetaClient final : public MetaClient {
 public:
  LayoutRewritingMetaClient(MetaClient& inner, std::optional<meta::IovLayout> replacement)
      : inner_(inner), replacement_(std::move(replacement)) {}
  Result<meta::StorageConfig> GetStorageConfig(const std::string& s) override { return inner_.GetStorageConfig(s); }
  Result<meta::WriteSession> StartWrite(std::span<const std::string> keys, const std::string& s) override {
    return inner_.StartWrite(keys, s);
  }
  Status FinishWrite(const std::string& session_id, std::span<const std::string> keys,
                     std::span<const int64_t> checksums, std::span<const uint8_t> present,
                     std::span<const meta::IovLayout>, int64_t header_version) override {
    std::vector<meta::IovLayout> sent;
    if (replacement_) sent.assign(keys.size(), *replacement_);
    return inner_.FinishWrite(session_id, keys, checksums, present, sent, header_version);
  }
  Result<std::vector<std::optional<meta::CacheLocation>>> GetLocations(std::span<const std::string> keys) override {
    return inner_.GetLocations(keys);
  }
  Status Remove(std::span<const std::string> keys) override { return inner_.Remove(keys); }

 private:
  MetaClient& inner_;
  std::optional<meta::IovLayout> replacement_;
};

// A Store that fails every Dump (a Put that failed), delegating everything else.
class FailingDumpStore final : public store::Store {
 public:
  explicit FailingDumpStore(store::Store& inner) : inner_(inner) {}
  Result<std::vector<bool>> Lookup(std::span<const store::BlockId> ids) override { return inner_.Lookup(ids); }
  Result<store::TaskHandle> Dump(store::TransferTask) override {
    return Status::IoError("injected: dump failed", EIO);
  }
  Result<store::TaskHandle> Load(store::TransferTask task) override { return inner_.Load(std::move(task)); }
  Status Wait(store::TaskHandle h) override { return inner_.Wait(h); }
  Status CheckHealth() override { return inner_.CheckHealth(); }
  Status Remove(std::span<const store::BlockId> ids) override { return inner_.Remove(ids); }

 private:
  store::Store& inner_;
};

class TransferClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::PosixStoreConfig config;
    for (const char* name : {"p0", "p1"}) {
      std::filesystem::create_directories(dir_.path() / name);
      config.storage_backends.push_back((dir_.path() / name).string());
    }
    config.block_size = kBlock;
    config.shard_dirs_at_setup = false;  // 2 x 4096 directories would cost seconds per test to make and remove
    config.shard_size = kShard;
    config.tensor_size = kShard;
    config.io_engine = store::IoEngineKind::kPsync;
    config.concurrency = 2;
    Status s = store_.Setup(config);
    ASSERT_TRUE(s.ok()) << s.ToString();
    registry_ = std::make_unique<meta::StorageRegistry>(indexer_);
    manager_ = std::make_unique<meta::CacheManager>(indexer_, *registry_);
    meta_client_ = std::make_unique<InProcessMetaClient>(*manager_, *registry_);
  }

  void AddStorage(const std::string& name, bool checksums, ChecksumAlgo algo = ChecksumAlgo::kCrc64Full) {
    meta::StorageConfig c;
    c.type = "posix";
    c.global_unique_name = name;
    c.integrity.enable_meta_checksum = checksums;
    c.integrity.algo = algo;
    ASSERT_TRUE(registry_->AddStorage(c, 0).ok());
  }

  std::unique_ptr<TransferClient> Client(const std::string& storage, store::Store* store = nullptr,
                                         bool round_trip = false, MetaClient* meta = nullptr) {
    TransferClientOptions o;
    o.storage = storage;
    o.block_size = kBlock;
    o.shard_size = kShard;
    o.verify_meta_round_trip = round_trip;
    o.on_mismatch = [this](const ChecksumMismatchEvent& e) {
      events_.push_back(e);
      if (on_event_) on_event_();
    };
    o.checksum_threads = checksum_threads_;
    auto c = TransferClient::Create(meta ? *meta : *meta_client_, store ? *store : store_, o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  // The stored file of `key`'s block, whichever backend holds it.
  std::filesystem::path FileOf(const std::string& key) {
    const auto id = *store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey(key));
    for (const auto& backend : store_.config().storage_backends) {
      std::filesystem::path p = store::BlockPath(backend, id);
      if (std::filesystem::exists(p)) return p;
    }
    ADD_FAILURE() << "no stored file for key " << key;
    return {};
  }

  static void FlipByte(const std::filesystem::path& file, uint64_t offset) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f) << "cannot open " << file;
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x01);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(&c, 1);
  }

  TempDir dir_{"kvchaos-client"};
  store::PosixStore store_;
  meta::LocalMetaIndexer indexer_;
  std::unique_ptr<meta::StorageRegistry> registry_;
  std::unique_ptr<meta::CacheManager> manager_;
  std::unique_ptr<InProcessMetaClient> meta_client_;
  std::vector<ChecksumMismatchEvent> events_;
  std::function<void()> on_event_;  // after each event is recorded (on_mismatch calls are serial)
  size_t checksum_threads_ = 0;     // Client()'s option (0: the default)
};

TEST_F(TransferClientTest, FlippedByteOnDiskIsReportedForExactlyThatBlock) {
  AddStorage("nfs", true, ChecksumAlgo::kCrc64Full);
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  Rng rng(1);
  Blocks data(rng, 4);
  const std::vector<std::string> keys{"k0", "k1", "k2", "k3"};
  Result<SaveResult> saved = client->Save(keys, data.views);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(saved->written, (std::vector<uint8_t>{1, 1, 1, 1}));
  ASSERT_EQ(saved->checksums.size(), 4u);

  // A clean read verifies every block and returns the same bytes.
  Blocks out(rng, 4);
  LoadResult clean = client->LoadDetailed(keys, out.views);
  ASSERT_TRUE(clean.status.ok()) << clean.status.ToString();
  EXPECT_EQ(clean.verified, (std::vector<uint8_t>{1, 1, 1, 1}));
  for (size_t i = 0; i < 4; ++i) ASSERT_EQ(out.owned[i]->bytes, data.owned[i]->bytes) << "block " << i;

  // Flip one byte in the middle of block 2's second shard (outside any sampled head/tail).
  FlipByte(FileOf("k2"), kShard + 5000);
  Blocks again(rng, 4);
  LoadResult bad = client->LoadDetailed(keys, again.views);
  EXPECT_EQ(bad.status.code(), StatusCode::kChecksumMismatch) << bad.status.ToString();
  EXPECT_NE(bad.status.message().find("'k2'"), std::string::npos) << bad.status.ToString();
  EXPECT_EQ(bad.faulty, (std::vector<size_t>{2})) << "exactly the flipped block";
  for (size_t i : {0, 1, 3}) EXPECT_EQ(again.owned[i]->bytes, data.owned[i]->bytes) << "block " << i;

  ASSERT_EQ(events_.size(), 1u) << "one event per faulty block";
  EXPECT_EQ(events_[0].key, "k2");
  EXPECT_EQ(events_[0].storage, "nfs");
  EXPECT_EQ(events_[0].stage, integrity::VerifyStage::kReadOutput);
  EXPECT_EQ(events_[0].expected, saved->checksums[2]);
  EXPECT_NE(events_[0].actual, events_[0].expected);
  EXPECT_EQ(client->MismatchCounts().at("nfs"), 1u);
}

TEST_F(TransferClientTest, SampledAlgorithmCatchesAFlipInTheSampledTail) {
  AddStorage("nfs", true, ChecksumAlgo::kCrc32XorInt64);
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  Rng rng(2);
  Blocks data(rng, 2);
  const std::vector<std::string> keys{"a", "b"};
  ASSERT_TRUE(client->Save(keys, data.views).ok());
  // The last byte of the block is in the sampled tail of the last IOV.
  FlipByte(FileOf("b"), kBlock - 1);
  Blocks out(rng, 2);
  LoadResult r = client->LoadDetailed(keys, out.views);
  EXPECT_EQ(r.status.code(), StatusCode::kChecksumMismatch);
  EXPECT_EQ(r.faulty, (std::vector<size_t>{1}));
  EXPECT_EQ(events_.at(0).algo, ChecksumAlgo::kCrc32XorInt64);
}

TEST_F(TransferClientTest, BlocksWithoutStoredChecksumLoadUnverified) {
  AddStorage("plain", false);
  auto client = Client("plain");
  ASSERT_NE(client, nullptr);
  Rng rng(3);
  Blocks data(rng, 2);
  const std::vector<std::string> keys{"a", "b"};
  Result<SaveResult> saved = client->Save(keys, data.views);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_TRUE(saved->checksums.empty()) << "meta checksums are off for this storage";
  Blocks out(rng, 2);
  LoadResult r = client->LoadDetailed(keys, out.views);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.verified, (std::vector<uint8_t>{0, 0})) << "nothing stored to compare with: reported, not faked";
  EXPECT_EQ(out.owned[1]->bytes, data.owned[1]->bytes);
}

TEST_F(TransferClientTest, AFailedPutReportsNoChecksumsAndCommitsNothing) {
  AddStorage("nfs", true);
  FailingDumpStore failing(store_);
  auto client = Client("nfs", &failing);
  ASSERT_NE(client, nullptr);
  Rng rng(4);
  Blocks data(rng, 1);
  const std::vector<std::string> keys{"a"};
  Result<SaveResult> saved = client->Save(keys, data.views);
  ASSERT_FALSE(saved.ok());
  EXPECT_EQ(saved.status().code(), StatusCode::kIoError) << saved.status().ToString();
  auto locs = manager_->GetCacheLocation(keys);
  ASSERT_TRUE(locs.ok());
  EXPECT_FALSE((*locs)[0].has_value()) << "a failed write must not become readable";
}

TEST_F(TransferClientTest, CallerChecksumsAreCheckedBeforeWriting) {
  AddStorage("nfs", true);
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  Rng rng(5);
  Blocks data(rng, 2);
  const std::vector<std::string> keys{"a", "b"};
  const std::vector<int64_t> wrong{0, 0};
  Result<SaveResult> saved = client->Save(keys, data.views, &wrong);
  EXPECT_EQ(saved.status().code(), StatusCode::kChecksumMismatch) << saved.status().ToString();
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[0].stage, integrity::VerifyStage::kWriteInput);
  auto ids = std::vector<store::BlockId>{*store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey("a"))};
  EXPECT_FALSE((*store_.Lookup(ids))[0]) << "nothing may be written after a WRITE_INPUT mismatch";
}

TEST_F(TransferClientTest, MetaRoundTripVerificationPassesWhenMetaKeepsTheChecksums) {
  AddStorage("nfs", true);
  auto client = Client("nfs", nullptr, /*round_trip=*/true);
  ASSERT_NE(client, nullptr);
  Rng rng(6);
  Blocks data(rng, 3);
  const std::vector<std::string> keys{"a", "b", "c"};
  Result<SaveResult> saved = client->Save(keys, data.views);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_TRUE(events_.empty());
  // A second Save finds everything cached and writes nothing.
  Result<SaveResult> again = client->Save(keys, data.views);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->written, (std::vector<uint8_t>{0, 0, 0}));
}

TEST_F(TransferClientTest, MissingKeysAreNotFoundWhileTheOthersStillVerify) {
  AddStorage("nfs", true);
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  Rng rng(7);
  Blocks data(rng, 1);
  const std::vector<std::string> one{"a"};
  ASSERT_TRUE(client->Save(one, data.views).ok());
  Blocks out(rng, 2);
  const std::vector<std::string> keys{"a", "never"};
  LoadResult r = client->LoadDetailed(keys, out.views);
  EXPECT_EQ(r.status.code(), StatusCode::kNotFound) << r.status.ToString();
  EXPECT_EQ(r.missing, (std::vector<size_t>{1}));
  EXPECT_EQ(r.verified, (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(out.owned[0]->bytes, data.owned[0]->bytes);
}

// ---- Reconciling meta with the store ---------------------------------------------------------

// Truncates `file` to `bytes` (what a crash without durable commits can leave).
void Truncate(const std::filesystem::path& file, uint64_t bytes) { std::filesystem::resize_file(file, bytes); }

bool Listed(meta::CacheManager& manager, const std::string& key) {
  auto locs = manager.GetCacheLocation(std::vector<std::string>{key});
  return locs.ok() && (*locs)[0].has_value();
}

TEST_F(TransferClientTest, BlocksTheStoreLostAreMissesAndTheirEntriesAreDropped) {
  AddStorage("nfs", true);
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  Rng rng(11);
  Blocks data(rng, 4);
  const std::vector<std::string> keys{"k0", "k1", "k2", "k3"};
  ASSERT_TRUE(client->Save(keys, data.views).ok());
  std::filesystem::remove(FileOf("k1"));  // gone
  Truncate(FileOf("k2"), kShard);         // short: its second shard never made it
  Blocks out(rng, 4);
  LoadResult r = client->LoadDetailed(keys, out.views);
  EXPECT_EQ(r.status.code(), StatusCode::kNotFound) << r.status.ToString();
  EXPECT_NE(r.status.message().find("lost from the store"), std::string::npos) << r.status.ToString();
  EXPECT_EQ(r.missing, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(r.lost, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(r.verified, (std::vector<uint8_t>{1, 0, 0, 1})) << "the intact blocks are still verified";
  EXPECT_EQ(out.owned[0]->bytes, data.owned[0]->bytes);
  EXPECT_EQ(out.owned[3]->bytes, data.owned[3]->bytes);
  EXPECT_FALSE(Listed(*manager_, "k1")) << "the index still promises a block the store lost";
  EXPECT_FALSE(Listed(*manager_, "k2")) << "the index still promises a block the store has only half of";
  EXPECT_TRUE(Listed(*manager_, "k0"));
  for (size_t b = 0; b < store_.config().storage_backends.size(); ++b) {
    EXPECT_EQ(store_.backends().window(static_cast<int>(b)).failures(), 0) << "a lost block is no failure of path " << b;
  }
  // The next Save writes the lost blocks again (before the drop it answered "already cached").
  Result<SaveResult> again = client->Save(keys, data.views);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->written, (std::vector<uint8_t>{0, 1, 1, 0}));
  Blocks back(rng, 4);
  ASSERT_TRUE(client->LoadDetailed(keys, back.views).status.ok());
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(back.owned[i]->bytes, data.owned[i]->bytes) << "block " << i;
}

TEST_F(TransferClientTest, KeepingLostEntriesOnlyReportsThem) {
  AddStorage("nfs", true);
  TransferClientOptions o;
  o.storage = "nfs";
  o.block_size = kBlock;
  o.shard_size = kShard;
  o.drop_lost_entries = false;
  auto client = TransferClient::Create(*meta_client_, store_, o);
  ASSERT_TRUE(client.ok());
  Rng rng(12);
  Blocks data(rng, 1);
  const std::vector<std::string> keys{"a"};
  ASSERT_TRUE((*client)->Save(keys, data.views).ok());
  std::filesystem::remove(FileOf("a"));
  Blocks out(rng, 1);
  LoadResult r = (*client)->LoadDetailed(keys, out.views);
  EXPECT_EQ(r.lost, (std::vector<size_t>{0}));
  EXPECT_TRUE(Listed(*manager_, "a"));
}

// Damage the store cannot see (a full-length file with other bytes, as unwritten extents read
// back as zeros after a crash) is a checksum mismatch; a mismatch never drops the entry (a bit
// flipped on the way may be transient).
TEST_F(TransferClientTest, ATornFullLengthBlockIsAMismatchAndKeepsItsEntry) {
  AddStorage("nfs", true);
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  Rng rng(13);
  Blocks data(rng, 1);
  const std::vector<std::string> keys{"t"};
  ASSERT_TRUE(client->Save(keys, data.views).ok());
  {
    std::fstream f(FileOf("t"), std::ios::in | std::ios::out | std::ios::binary);
    const std::string zeros(kShard, '\0');
    f.seekp(static_cast<std::streamoff>(kShard));
    f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  Blocks out(rng, 1);
  LoadResult r = client->LoadDetailed(keys, out.views);
  EXPECT_EQ(r.status.code(), StatusCode::kChecksumMismatch) << r.status.ToString();
  EXPECT_TRUE(r.lost.empty());
  EXPECT_TRUE(Listed(*manager_, "t"));
}

// A read that fails with an I/O error on the block's path, then misses on the next path (separate
// storage here), says nothing about the block: it is still whole where it lives, so the miss is
// reported and the entry kept. Nor does a read that fails on every path drop anything.
TEST_F(TransferClientTest, AMissAfterAnIoErrorOnOnePathDropsNothing) {
  AddStorage("nfs", true);
  store::testing::FaultFileOps ops;
  store::PosixStore faulty(store::PosixStoreDeps{.file_ops = &ops});
  store::PosixStoreConfig config = store_.config();
  config.health.failure_threshold = config.health.health_window_size;  // the path stays in throughout
  ASSERT_TRUE(faulty.Setup(config).ok());
  auto client = Client("nfs", &faulty);
  ASSERT_NE(client, nullptr);
  Rng rng(14);
  Blocks data(rng, 1);
  const std::vector<std::string> keys{"e"};
  ASSERT_TRUE(client->Save(keys, data.views).ok());
  const std::string holder = FileOf("e").parent_path().parent_path().string();
  ops.Add(store::testing::FaultRule{.op = store::testing::Op::kRead, .prefix = holder + "/", .err = EIO, .times = 1});
  Blocks out(rng, 1);
  LoadResult r = client->LoadDetailed(keys, out.views);
  EXPECT_EQ(r.status.code(), StatusCode::kNotFound) << "the retry on the other path misses: " << r.status.ToString();
  EXPECT_EQ(r.missing, (std::vector<size_t>{0}));
  EXPECT_TRUE(r.lost.empty()) << "an I/O error on the block's path made it look lost";
  EXPECT_TRUE(Listed(*manager_, "e")) << "the entry of a block that is fine was dropped";
  ops.Add(store::testing::FaultRule{.op = store::testing::Op::kOpen, .prefix = dir_.str(), .err = EIO});
  r = client->LoadDetailed(keys, out.views);
  EXPECT_EQ(r.status.code(), StatusCode::kIoError) << r.status.ToString();
  EXPECT_TRUE(Listed(*manager_, "e"));
  ops.Clear();
  ASSERT_TRUE(client->LoadDetailed(keys, out.views).status.ok());
  EXPECT_EQ(out.owned[0]->bytes, data.owned[0]->bytes);
}

TEST_F(TransferClientTest, WrongBlockShapesAreRejected) {
  AddStorage("nfs", true);
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  std::vector<std::byte> small(kBlock - 1);
  std::vector<BlockBuffers> blocks{{std::span<std::byte>(small)}};
  const std::vector<std::string> keys{"a"};
  EXPECT_EQ(client->Save(keys, blocks).status().code(), StatusCode::kInvalidArgument);
  const std::vector<std::string> two{"a", "b"};
  EXPECT_EQ(client->Load(two, blocks).code(), StatusCode::kInvalidArgument);
}

TEST_F(TransferClientTest, ScrubFindsTheCorruptBlockAmongMany) {
  AddStorage("nfs", true);
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  Rng rng(8);
  Blocks data(rng, 5);
  const std::vector<std::string> keys{"s0", "s1", "s2", "s3", "s4"};
  ASSERT_TRUE(client->Save(keys, data.views).ok());
  FlipByte(FileOf("s3"), 123);
  std::vector<std::string> scrub_keys = keys;
  scrub_keys.push_back("gone");
  // The writer's IOV layout (OwnedBlock's cuts): checksums bind it.
  const std::vector<uint64_t> layout{1000, 8000, 8000, 13000, kBlock - 30000};
  EXPECT_EQ(client->Scrub(scrub_keys, std::vector<uint64_t>{100}).status().code(), StatusCode::kInvalidArgument);
  Result<TransferClient::ScrubReport> r = client->Scrub(scrub_keys, layout, /*batch_blocks=*/2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->blocks, 6u);
  EXPECT_EQ(r->verified, 4u);
  EXPECT_EQ(r->unverified, 0u);
  EXPECT_EQ(r->mismatched, (std::vector<std::string>{"s3"}));
  EXPECT_EQ(r->missing, (std::vector<std::string>{"gone"}));
  EXPECT_EQ(client->MismatchCounts().at("nfs"), 1u);

  // A block lost from the store: the scrub reports it and drops its entry.
  std::filesystem::remove(FileOf("s1"));
  r = client->Scrub(scrub_keys, layout, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->lost, (std::vector<std::string>{"s1"}));
  EXPECT_EQ(r->missing, (std::vector<std::string>{"s1", "gone"}));
  EXPECT_EQ(r->verified, 3u);
  EXPECT_FALSE(Listed(*manager_, "s1"));
}

TEST_F(TransferClientTest, SaveRecordsEachBlocksIovLayoutWithItsChecksum) {
  AddStorage("nfs", true);
  AddStorage("plain", false);
  Rng rng(11);
  Blocks data(rng, 2);
  const std::vector<std::string> keys{"l0", "l1"};
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Save(keys, data.views).ok());
  auto locs = manager_->GetCacheLocation(keys);
  ASSERT_TRUE(locs.ok()) << locs.status().ToString();
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE((*locs)[i].has_value()) << keys[i];
    EXPECT_TRUE((*locs)[i]->iov_layout.Matches(kWriterLayout)) << keys[i] << ": " << (*locs)[i]->iov_layout.ToString();
    EXPECT_EQ((*locs)[i]->iov_layout.ToString(), kWriterLayoutText);
    EXPECT_EQ((*locs)[i]->iov_layout.runs().size(), 4u) << "the two 8000-byte IOVs are one run";
  }

  // Without meta checksums nothing is stored to bind the layout to: it goes with the checksum.
  const std::vector<std::string> plain_keys{"p0"};
  auto plain = Client("plain");
  ASSERT_NE(plain, nullptr);
  ASSERT_TRUE(plain->Save(plain_keys, std::span<const BlockBuffers>(data.views).first(1)).ok());
  auto plain_locs = manager_->GetCacheLocation(plain_keys);
  ASSERT_TRUE(plain_locs.ok());
  EXPECT_FALSE((*plain_locs)[0]->iov_layout.known()) << (*plain_locs)[0]->iov_layout.ToString();
}

TEST_F(TransferClientTest, LoadWithAnotherLayoutIsALayoutMismatchNotAChecksumMismatch) {
  for (ChecksumAlgo algo : {ChecksumAlgo::kCrc32XorInt64, ChecksumAlgo::kCrc64Full}) {
    SCOPED_TRACE(std::string(integrity::ChecksumAlgoName(algo)));
    const std::string storage = std::string("nfs-") + std::string(integrity::ChecksumAlgoName(algo));
    AddStorage(storage, true, algo);
    auto client = Client(storage);
    ASSERT_NE(client, nullptr);
    events_.clear();
    Rng rng(12);
    Blocks data(rng, 2);
    const std::vector<std::string> keys{storage + "-a", storage + "-b"};
    ASSERT_TRUE(client->Save(keys, data.views).ok());

    Blocks out(rng, 2);
    std::vector<BlockBuffers> one_iov = OneIovEach(out);
    LoadResult r = client->LoadDetailed(keys, one_iov);
    EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument) << r.status.ToString();
    const std::string expect = "layout mismatch: block 0 '" + keys[0] + "': stored " + kWriterLayoutText +
                               ", given 1 x 32768 bytes";
    EXPECT_NE(r.status.message().find(expect), std::string::npos)
        << "should say '" << expect << "': " << r.status.ToString();
    EXPECT_EQ(r.layout_mismatch, (std::vector<size_t>{0, 1}));
    EXPECT_TRUE(r.faulty.empty()) << "intact bytes cut another way are not damage";
    EXPECT_EQ(r.verified, (std::vector<uint8_t>{1, 1})) << "checked under the stored layout";
    EXPECT_TRUE(events_.empty()) << "no checksum mismatch event for a layout mismatch";
    EXPECT_TRUE(client->MismatchCounts().empty());
    for (size_t i = 0; i < 2; ++i) EXPECT_EQ(out.owned[i]->bytes, data.owned[i]->bytes) << "block " << i;

    // Real damage still wins over the layout: ChecksumMismatch for exactly the damaged block.
    FlipByte(FileOf(keys[1]), kBlock - 1);
    Blocks again(rng, 2);
    one_iov = OneIovEach(again);
    LoadResult bad = client->LoadDetailed(keys, one_iov);
    EXPECT_EQ(bad.status.code(), StatusCode::kChecksumMismatch) << bad.status.ToString();
    EXPECT_EQ(bad.faulty, (std::vector<size_t>{1}));
    EXPECT_EQ(bad.layout_mismatch, (std::vector<size_t>{0, 1}));
    EXPECT_EQ(events_.size(), 1u);

    // With the writer's layout the same Load is a plain checksum mismatch of block 1.
    Blocks right(rng, 2);
    LoadResult plain = client->LoadDetailed(keys, right.views);
    EXPECT_EQ(plain.status.code(), StatusCode::kChecksumMismatch) << plain.status.ToString();
    EXPECT_TRUE(plain.layout_mismatch.empty());
  }
}

TEST_F(TransferClientTest, ScrubUsesStoredLayoutsAndAssumesOneOnlyForOldRecords) {
  AddStorage("nfs", true, ChecksumAlgo::kCrc32XorInt64);
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  LayoutRewritingMetaClient old_writer_meta(*meta_client_, std::nullopt);
  auto old_writer = Client("nfs", nullptr, false, &old_writer_meta);
  ASSERT_NE(old_writer, nullptr);
  Rng rng(13);
  Blocks data(rng, 5);
  const std::vector<std::string> keys{"n0", "n1", "n2", "n3"};
  ASSERT_TRUE(client->Save(keys, std::span<const BlockBuffers>(data.views).first(4)).ok());
  const std::vector<std::string> old_key{"old0"};
  ASSERT_TRUE(old_writer->Save(old_key, std::span<const BlockBuffers>(data.views).subspan(4)).ok());
  auto old_loc = manager_->GetCacheLocation(old_key);
  ASSERT_TRUE(old_loc.ok());
  ASSERT_TRUE((*old_loc)[0]->checksum_present);
  ASSERT_FALSE((*old_loc)[0]->iov_layout.known()) << "an old client sends no layout";

  // A wrong iov_size (one IOV per block): blocks with a stored layout are still read right.
  const std::vector<uint64_t> wrong{kBlock};
  Result<TransferClient::ScrubReport> stored_only = client->Scrub(keys, wrong);
  ASSERT_TRUE(stored_only.ok()) << stored_only.status().ToString();
  EXPECT_TRUE(stored_only->mismatched.empty()) << "false alarm from a wrong iov_size: " << stored_only->mismatched[0];
  EXPECT_EQ(stored_only->verified, 4u);
  EXPECT_EQ(stored_only->with_stored_layout, 4u);
  EXPECT_EQ(stored_only->with_assumed_layout, 0u);

  std::vector<std::string> all = keys;
  all.push_back("old0");
  // The old record is cut the assumed (wrong) way and mismatches: said so, not hidden.
  Result<TransferClient::ScrubReport> mixed = client->Scrub(all, wrong, /*batch_blocks=*/2);
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  EXPECT_EQ(mixed->mismatched, (std::vector<std::string>{"old0"}));
  EXPECT_EQ(mixed->mismatched_with_assumed_layout, 1u);
  EXPECT_EQ(mixed->with_stored_layout, 4u);
  EXPECT_EQ(mixed->with_assumed_layout, 1u);

  // The right assumed layout verifies the old record too; real damage is found either way.
  Result<TransferClient::ScrubReport> right = client->Scrub(all, kWriterLayout);
  ASSERT_TRUE(right.ok()) << right.status().ToString();
  EXPECT_TRUE(right->mismatched.empty());
  EXPECT_EQ(right->verified, 5u);
  FlipByte(FileOf("n2"), kBlock - 2);
  Result<TransferClient::ScrubReport> damaged = client->Scrub(all, kWriterLayout);
  ASSERT_TRUE(damaged.ok()) << damaged.status().ToString();
  EXPECT_EQ(damaged->mismatched, (std::vector<std::string>{"n2"}));
  EXPECT_EQ(damaged->mismatched_with_assumed_layout, 0u);
}

TEST_F(TransferClientTest, AStoredLayoutThatDoesNotFitTheBlockIsNamedNotVerified) {
  AddStorage("nfs", true);
  const std::vector<uint64_t> short_layout{4096};
  LayoutRewritingMetaClient corrupt_meta(*meta_client_, *meta::IovLayout::FromSizes(short_layout));
  auto writer = Client("nfs", nullptr, false, &corrupt_meta);
  ASSERT_NE(writer, nullptr);
  Rng rng(14);
  Blocks data(rng, 1);
  const std::vector<std::string> keys{"bad"};
  ASSERT_TRUE(writer->Save(keys, data.views).ok());

  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  Blocks out(rng, 1);
  LoadResult r = client->LoadDetailed(keys, out.views);
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument) << r.status.ToString();
  EXPECT_NE(r.status.message().find("adds up to 4096 bytes"), std::string::npos) << r.status.ToString();
  EXPECT_EQ(r.verified, (std::vector<uint8_t>{0}));
  EXPECT_TRUE(r.faulty.empty());

  Result<TransferClient::ScrubReport> scrub = client->Scrub(keys, {});
  ASSERT_TRUE(scrub.ok()) << scrub.status().ToString();
  EXPECT_EQ(scrub->bad_layout, keys);
  EXPECT_TRUE(scrub->mismatched.empty());
  EXPECT_EQ(scrub->verified, 0u);
  EXPECT_EQ(scrub->unverified, 0u) << "it has a checksum; the layout is what is wrong";
}

// A meta service that hands out a storage config the registry would refuse (an older server).
class StaticConfigMetaClient final : public MetaClient {
 public:
  explicit StaticConfigMetaClient(meta::StorageConfig c) : config_(std::move(c)) {}
  Result<meta::StorageConfig> GetStorageConfig(const std::string&) override { return config_; }
  Result<meta::WriteSession> StartWrite(std::span<const std::string>, const std::string&) override {
    return Status::Internal("unused");
  }
  Status FinishWrite(const std::string&, std::span<const std::string>, std::span<const int64_t>,
                     std::span<const uint8_t>, std::span<const meta::IovLayout>, int64_t) override {
    return Status::Internal("unused");
  }
  Result<std::vector<std::optional<meta::CacheLocation>>> GetLocations(std::span<const std::string>) override {
    return Status::Internal("unused");
  }
  Status Remove(std::span<const std::string>) override { return Status::Internal("unused"); }

 private:
  meta::StorageConfig config_;
};

// Both config checks of the design, at the client too (a config that slipped past an older
// server): the header switch without a version, and a version without the switch.
TEST_F(TransferClientTest, CreateRefusesHalfConfiguredInlineHeadersAndUnknownStorage) {
  meta::StorageConfig c;
  c.type = "posix";
  c.global_unique_name = "old";
  c.integrity.enable_inline_header = true;
  StaticConfigMetaClient old_server(c);
  TransferClientOptions o{"old", kBlock, kShard};
  auto r = TransferClient::Create(old_server, store_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInlineHeaderInvalid) << r.status().ToString();
  EXPECT_NE(r.status().message().find("without a version"), std::string::npos) << r.status().ToString();

  c.integrity.enable_inline_header = false;
  c.integrity.inline_header_version = 1;
  StaticConfigMetaClient orphan_server(c);
  r = TransferClient::Create(orphan_server, store_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidConfig) << r.status().ToString();
  EXPECT_NE(r.status().message().find("orphan version"), std::string::npos) << r.status().ToString();

  c.integrity.enable_inline_header = true;
  StaticConfigMetaClient plan_b(c);
  EXPECT_TRUE(TransferClient::Create(plan_b, store_, o).ok()) << "switch and version together are plan B";

  TransferClientOptions unknown{"nope", kBlock, kShard};
  EXPECT_EQ(TransferClient::Create(*meta_client_, store_, unknown).status().code(), StatusCode::kNotFound);
}

// Block and shard sizes come from the store: a client told nothing uses the store's, and one told
// other sizes is refused at Create naming both numbers (it used to be accepted, and the first Save
// failed naming a shard's position in the task instead).
TEST_F(TransferClientTest, SizesComeFromTheStoreAndAMismatchNamesBothNumbers) {
  AddStorage("nfs", true);
  TransferClientOptions defaults;
  defaults.storage = "nfs";
  auto client = TransferClient::Create(*meta_client_, store_, defaults);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->block_size(), kBlock);
  EXPECT_EQ((*client)->shard_size(), kShard);
  Rng rng(21);
  Blocks data(rng, 2);
  ASSERT_TRUE((*client)->Save(std::vector<std::string>{"s0", "s1"}, data.views).ok());

  TransferClientOptions doubled{"nfs", 2 * kBlock, kShard};
  auto refused = TransferClient::Create(*meta_client_, store_, doubled);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidConfig);
  EXPECT_NE(refused.status().message().find("block_size " + std::to_string(2 * kBlock) +
                                            " differs from the store's block_size " + std::to_string(kBlock)),
            std::string::npos)
      << refused.status().ToString();
  TransferClientOptions half_shard{"nfs", kBlock, kShard / 2};
  auto shard = TransferClient::Create(*meta_client_, store_, half_shard);
  ASSERT_FALSE(shard.ok());
  EXPECT_NE(shard.status().message().find("shard_size " + std::to_string(kShard / 2) +
                                          " differs from the store's shard_size " + std::to_string(kShard)),
            std::string::npos)
      << shard.status().ToString();
}

// ---- Checksums overlapped with the store's I/O ------------------------------------------------

// Several faulty blocks in one Load, verified in parallel: every one is named, in the status, in
// `faulty` and by one event each, for both algorithms; the good blocks come back intact.
TEST_F(TransferClientTest, EveryFaultyBlockOfOneParallelLoadIsNamed) {
  for (ChecksumAlgo algo : {ChecksumAlgo::kCrc64Full, ChecksumAlgo::kCrc32XorInt64}) {
    SCOPED_TRACE(std::string(integrity::ChecksumAlgoName(algo)));
    const std::string storage = std::string("nfs-") + std::string(integrity::ChecksumAlgoName(algo));
    AddStorage(storage, true, algo);
    checksum_threads_ = 4;
    auto client = Client(storage);
    ASSERT_NE(client, nullptr);
    ASSERT_EQ(client->checksum_threads(), 4u);
    Rng rng(31);
    Blocks data(rng, 8);
    std::vector<std::string> keys;
    for (int i = 0; i < 8; ++i) keys.push_back(storage + "-k" + std::to_string(i));
    Result<SaveResult> saved = client->Save(keys, data.views);
    ASSERT_TRUE(saved.ok()) << saved.status().ToString();
    // The checksums computed on the pool are the ones a single thread computes.
    for (size_t b = 0; b < 8; ++b) {
      std::vector<integrity::Iov> iovs(data.views[b].begin(), data.views[b].end());
      const integrity::Block block(iovs);
      Result<std::vector<int64_t>> one =
          integrity::ChecksumComputer({algo, integrity::kDefaultSampleWidth}).Compute({&block, 1});
      ASSERT_TRUE(one.ok());
      EXPECT_EQ(saved->checksums[b], one->front()) << "block " << b;
    }
    // Byte 0 is in every algorithm's reach (the sampled head of the first IOV).
    for (size_t b : {1, 4, 5, 7}) FlipByte(FileOf(keys[b]), 0);
    events_.clear();
    Blocks out(rng, 8);
    LoadResult r = client->LoadDetailed(keys, out.views);
    EXPECT_EQ(r.status.code(), StatusCode::kChecksumMismatch) << r.status.ToString();
    EXPECT_EQ(r.faulty, (std::vector<size_t>{1, 4, 5, 7}));
    EXPECT_EQ(r.verified, std::vector<uint8_t>(8, 1)) << "every block is verified, faulty or not";
    for (size_t b : {1, 4, 5, 7}) {
      EXPECT_NE(r.status.message().find("'" + keys[b] + "'"), std::string::npos) << r.status.ToString();
    }
    std::vector<std::string> reported;
    for (const ChecksumMismatchEvent& e : events_) reported.push_back(e.key);
    std::sort(reported.begin(), reported.end());
    EXPECT_EQ(reported, (std::vector<std::string>{keys[1], keys[4], keys[5], keys[7]})) << "one event per block";
    for (size_t b : {0, 2, 3, 6}) EXPECT_EQ(out.owned[b]->bytes, data.owned[b]->bytes) << "block " << b;
  }
}

// A Store whose Wait for one block's read holds it until the test lets it go (or a generous
// deadline passes, so a client that never verifies early fails the test instead of hanging it).
class HeldReadStore final : public store::Store {
 public:
  HeldReadStore(store::Store& inner, store::BlockId held) : inner_(inner), held_(held) {}
  Result<std::vector<bool>> Lookup(std::span<const store::BlockId> ids) override { return inner_.Lookup(ids); }
  Result<store::TaskHandle> Dump(store::TransferTask task) override { return inner_.Dump(std::move(task)); }
  Result<store::TaskHandle> Load(store::TransferTask task) override {
    const bool held = !task.shards.empty() && task.shards.front().block == held_;
    Result<store::TaskHandle> h = inner_.Load(std::move(task));
    if (held && h.ok()) held_handle_ = *h;
    return h;
  }
  Status Wait(store::TaskHandle h) override {
    const Status s = inner_.Wait(h);  // the bytes are there; only the answer is held back
    if (held_handle_ && *held_handle_ == h) {
      std::unique_lock<std::mutex> lock(mu_);
      released_in_time_ = cv_.wait_for(lock, std::chrono::seconds(20), [this] { return released_; });
    }
    return s;
  }
  Status CheckHealth() override { return inner_.CheckHealth(); }
  Status Remove(std::span<const store::BlockId> ids) override { return inner_.Remove(ids); }
  std::optional<store::BlockGeometry> Geometry() const override { return inner_.Geometry(); }

  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  bool released_in_time() {
    std::lock_guard<std::mutex> lock(mu_);
    return released_in_time_;
  }

 private:
  store::Store& inner_;
  const store::BlockId held_;
  std::optional<store::TaskHandle> held_handle_;  // set by Load before any Wait
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  bool released_in_time_ = false;
};

// Block 0's read is held; blocks 1..5 are damaged. Their mismatches must be reported while block
// 0 is still being read (the store lets it go once all five were), and block 0 comes back only
// after its own verification. A client that verifies after all reads (or in read order) waits
// for block 0 first: the deadline passes and the test fails.
TEST_F(TransferClientTest, BlocksAreVerifiedWhileAnotherBlocksReadIsStillInFlight) {
  AddStorage("nfs", true, ChecksumAlgo::kCrc64Full);
  std::vector<std::string> keys;
  for (int i = 0; i < 6; ++i) keys.push_back("held-k" + std::to_string(i));
  HeldReadStore held(store_, *store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey(keys[0])));
  checksum_threads_ = 3;
  auto client = Client("nfs", &held);
  ASSERT_NE(client, nullptr);
  Rng rng(32);
  Blocks data(rng, 6);
  ASSERT_TRUE(client->Save(keys, data.views).ok());
  for (size_t b = 1; b < 6; ++b) FlipByte(FileOf(keys[b]), kShard + 7);
  on_event_ = [&] {
    if (events_.size() == 5) held.Release();
  };
  Blocks out(rng, 6);
  LoadResult r = client->LoadDetailed(keys, out.views);
  EXPECT_TRUE(held.released_in_time())
      << "the 5 damaged blocks were not all verified while block 0's read was held: verification waits "
         "for other blocks' reads";
  EXPECT_EQ(r.status.code(), StatusCode::kChecksumMismatch) << r.status.ToString();
  EXPECT_EQ(r.faulty, (std::vector<size_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(r.verified, std::vector<uint8_t>(6, 1));
  EXPECT_EQ(out.owned[0]->bytes, data.owned[0]->bytes);
}

// checksum_threads: the default is the store's concurrency bounded by the cores; a value past the
// bound is refused naming it.
TEST_F(TransferClientTest, ChecksumThreadsDefaultToTheStoresConcurrencyAndAreBounded) {
  AddStorage("nfs", true);
  auto client = Client("nfs");
  ASSERT_NE(client, nullptr);
  const size_t expected = std::min<size_t>(2, CurrentThreadAffinity().size());  // the store's concurrency is 2
  EXPECT_EQ(client->checksum_threads(), expected);
  TransferClientOptions o;
  o.storage = "nfs";
  o.checksum_threads = TransferClientOptions::kMaxChecksumThreads + 1;
  auto refused = TransferClient::Create(*meta_client_, store_, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidConfig);
  EXPECT_NE(refused.status().message().find("checksum_threads " +
                                            std::to_string(TransferClientOptions::kMaxChecksumThreads + 1)),
            std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace kvchaos::client
