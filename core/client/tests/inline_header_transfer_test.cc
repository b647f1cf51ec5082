// Inline headers end to end (docs/inline-header.md): TransferClient over a real PosixStore on temp
// dirs, on both I/O engines. Save writes each block's header after its data and records its
// version; Load checks it before the checksum: a block swapped with another key's is a misrouted
// read (InlineHeaderInvalid naming both keys, counted, an event), never a ChecksumMismatch and
// never good data, even when both blocks carry the same checksum; a damaged header is Corruption;
// a header of another length or a file cut short a miss; a storage being upgraded reads each
// block by what its record says.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/client/client_metrics.h"
#include "core/client/transfer_client.h"
#include "core/common/rng.h"
#include "core/meta/inline_header.h"
#include "core/meta/local_meta_indexer.h"
#include "core/store/block_id.h"
#include "core/store/posix_store.h"
#include "testing/temp_dir.h"

namespace kvchaos::client {
namespace {

using integrity::ChecksumAlgo;
using kvchaos::testing::TempDir;

constexpr uint64_t kShard = 16 << 10;
constexpr uint64_t kBlock = 2 * kShard;

class InlineHeaderTransferTest : public ::testing::TestWithParam<store::IoEngineKind> {
 protected:
  void SetUp() override {
    store::PosixStoreConfig config;
    std::filesystem::create_directories(dir_.path() / "p0");
    config.storage_backends.push_back((dir_.path() / "p0").string());
    config.block_size = kBlock;
    config.shard_dirs_at_setup = false;  // 2 x 4096 directories would cost seconds per test to make and remove
    config.shard_size = kShard;
    config.tensor_size = kShard;
    config.io_engine = GetParam();
    config.concurrency = 2;
    Status s = store_.Setup(config);
    ASSERT_TRUE(s.ok()) << s.ToString();
    registry_ = std::make_unique<meta::StorageRegistry>(indexer_);
    manager_ = std::make_unique<meta::CacheManager>(indexer_, *registry_);
    meta_client_ = std::make_unique<InProcessMetaClient>(*manager_, *registry_);
  }

  // (Re)registers storage "nfs", as an operator switching the header on or off does.
  void SetStorage(bool header, ChecksumAlgo algo = ChecksumAlgo::kCrc64Full, bool checksums = true) {
    (void)registry_->RemoveStorage("nfs", 0);
    meta::StorageConfig c;
    c.type = "posix";
    c.global_unique_name = "nfs";
    c.integrity.enable_meta_checksum = checksums;
    c.integrity.algo = algo;
    c.integrity.enable_inline_header = header;
    c.integrity.inline_header_version = header ? 1 : 0;
    Status s = registry_->AddStorage(c, 0);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  std::unique_ptr<TransferClient> Client() {
    TransferClientOptions o;
    o.storage = "nfs";
    o.on_misrouted = [this](const MisroutedReadEvent& e) { misroutes_.push_back(e); };
    o.on_mismatch = [this](const ChecksumMismatchEvent& e) { mismatches_.push_back(e); };
    auto c = TransferClient::Create(*meta_client_, store_, o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  // Blocks of random bytes in two IOVs (1000 bytes, the rest); `same` makes them all equal.
  void MakeBlocks(size_t n, bool same = false) {
    Rng rng(7);
    bytes_.assign(n, std::vector<std::byte>(kBlock));
    views_.clear();
    for (size_t b = 0; b < n; ++b) {
      for (auto& x : bytes_[b]) x = static_cast<std::byte>(rng.NextU64());
      if (same && b > 0) bytes_[b] = bytes_[0];
      views_.push_back({std::span<std::byte>(bytes_[b]).first(1000), std::span<std::byte>(bytes_[b]).subspan(1000)});
    }
  }

  std::filesystem::path FileOf(const std::string& key) {
    const auto id = *store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey(key));
    return store::BlockPath(store_.config().storage_backends[0], id);
  }

  std::vector<std::byte> HeaderBytesOf(const std::string& key) {
    std::ifstream f(FileOf(key), std::ios::binary);
    f.seekg(static_cast<std::streamoff>(kBlock));
    std::vector<std::byte> out(meta::InlineHeader::kBytes);
    f.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
    EXPECT_EQ(static_cast<size_t>(f.gcount()), out.size()) << "no header region after the data of " << key;
    return out;
  }

  void WriteAt(const std::filesystem::path& file, uint64_t offset, std::span<const std::byte> data) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f) << "cannot open " << file;
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }

  // Swaps the stored blocks of two keys (a misroute: each key's location holds the other's block).
  void SwapFiles(const std::string& a, const std::string& b) {
    const auto tmp = FileOf(a).string() + ".swap";
    std::filesystem::rename(FileOf(a), tmp);
    std::filesystem::rename(FileOf(b), FileOf(a));
    std::filesystem::rename(tmp, FileOf(b));
  }

  int64_t RecordedVersion(const std::string& key) {
    auto locs = meta_client_->GetLocations(std::vector<std::string>{key});
    EXPECT_TRUE(locs.ok() && (*locs)[0].has_value()) << key;
    return locs.ok() && (*locs)[0] ? (*locs)[0]->inline_header_version : -1;
  }

  TempDir dir_{"kvchaos-inline-header"};
  store::PosixStore store_;
  meta::LocalMetaIndexer indexer_;
  std::unique_ptr<meta::StorageRegistry> registry_;
  std::unique_ptr<meta::CacheManager> manager_;
  std::unique_ptr<InProcessMetaClient> meta_client_;
  std::vector<std::vector<std::byte>> bytes_;
  std::vector<BlockBuffers> views_;
  std::vector<MisroutedReadEvent> misroutes_;
  std::vector<ChecksumMismatchEvent> mismatches_;
};

// Both write paths: crc64_full (computed while the data is written, the headers in a second task)
// and crc32_xor_int64 (computed first, data and header in one task).
TEST_P(InlineHeaderTransferTest, SaveWritesTheHeaderAfterTheDataAndLoadChecksIt) {
  for (ChecksumAlgo algo : {ChecksumAlgo::kCrc64Full, ChecksumAlgo::kCrc32XorInt64}) {
    SCOPED_TRACE(std::string(integrity::ChecksumAlgoName(algo)));
    SetStorage(true, algo);
    auto client = Client();
    ASSERT_NE(client, nullptr);
    EXPECT_EQ(client->stored_block_bytes(), kBlock + 4096) << "capacity counts the header region";
    MakeBlocks(3);
    const std::string p = std::string(integrity::ChecksumAlgoName(algo)) + "/";
    const std::vector<std::string> keys{p + "k0", p + "k1", p + "k2"};
    Result<SaveResult> saved = client->Save(keys, views_);
    ASSERT_TRUE(saved.ok()) << saved.status().ToString();
    for (size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(std::filesystem::file_size(FileOf(keys[i])), kBlock + 4096) << keys[i];
      Result<meta::InlineHeader> h = meta::InlineHeader::Decode(HeaderBytesOf(keys[i]));
      ASSERT_TRUE(h.ok()) << h.status().ToString();
      EXPECT_EQ(h->key, keys[i]);
      EXPECT_EQ(h->data_length, kBlock);
      EXPECT_TRUE(h->checksum_present);
      EXPECT_EQ(h->checksum, saved->checksums[i]) << "the header names the checksum meta keeps";
      EXPECT_EQ(h->checksum_algo, algo);
      EXPECT_EQ(h->layout.ToString(), "1 x 1000 + 1 x 31768 bytes");
      EXPECT_EQ(RecordedVersion(keys[i]), 1) << "the record says the block has a header";
    }
    EXPECT_EQ(store_.tracked_temp_blocks(), 0u) << "every block committed, no temp file left";
    std::vector<std::vector<std::byte>> back(3, std::vector<std::byte>(kBlock));
    std::vector<BlockBuffers> into;
    for (auto& b : back) into.push_back({std::span<std::byte>(b).first(1000), std::span<std::byte>(b).subspan(1000)});
    LoadResult r = client->LoadDetailed(keys, into);
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    EXPECT_EQ(back, bytes_);
  }
}

// Passes everything to the real store but fails the Dump that carries only inline headers: the
// second task of a crc64_full Save, after the data went out.
class HeaderWritesFail final : public store::Store {
 public:
  explicit HeaderWritesFail(store::Store& inner) : inner_(inner) {}
  Result<std::vector<bool>> Lookup(std::span<const store::BlockId> ids) override { return inner_.Lookup(ids); }
  Result<store::TaskHandle> Dump(store::TransferTask task) override {
    const bool headers_only = task.inline_header && std::all_of(task.shards.begin(), task.shards.end(), [](const auto& s) {
                                return s.index == kBlock / kShard;
                              });
    if (headers_only) return Status::IoError("injected: the header write fails", EIO);
    return inner_.Dump(std::move(task));
  }
  Result<store::TaskHandle> Load(store::TransferTask task) override { return inner_.Load(std::move(task)); }
  Status Wait(store::TaskHandle handle) override { return inner_.Wait(handle); }
  Status CheckHealth() override { return inner_.CheckHealth(); }
  Status Remove(std::span<const store::BlockId> ids) override { return inner_.Remove(ids); }
  void Abandon(std::span<const store::BlockId> ids) override { inner_.Abandon(ids); }
  std::optional<store::BlockGeometry> Geometry() const override { return inner_.Geometry(); }

 private:
  store::Store& inner_;
};

// A Save whose headers cannot follow its data fails, and leaves no temp file of that data behind.
TEST_P(InlineHeaderTransferTest, ASaveWhoseHeadersFailLeavesNoTempFiles) {
  SetStorage(true, ChecksumAlgo::kCrc64Full);
  HeaderWritesFail failing(store_);
  TransferClientOptions o;
  o.storage = "nfs";
  auto client = TransferClient::Create(*meta_client_, failing, o);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  MakeBlocks(2);
  Result<SaveResult> saved = (*client)->Save(std::vector<std::string>{"a", "b"}, views_);
  ASSERT_FALSE(saved.ok()) << "a Save whose headers were not written must fail";
  EXPECT_NE(saved.status().message().find("inline headers"), std::string::npos) << saved.status().ToString();
  EXPECT_EQ(store_.tracked_temp_blocks(), 0u) << "the abandoned blocks are still tracked";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path())) {
    EXPECT_NE(entry.path().extension(), ".tmp") << "left behind: " << entry.path();
  }
}

// The misroute plan A cannot see: two keys saved with the same bytes carry the same checksum, so
// with their blocks swapped each still "verifies". The header names the key, so both are caught.
TEST_P(InlineHeaderTransferTest, SwappedBlocksAreMisroutedReadsNamingBothKeysEvenWithEqualChecksums) {
  SetStorage(true);
  auto client = Client();
  ASSERT_NE(client, nullptr);
  MakeBlocks(3, /*same=*/true);
  const std::vector<std::string> keys{"a", "b", "c"};
  ASSERT_TRUE(client->Save(keys, views_).ok());
  SwapFiles("a", "b");
  LoadResult r = client->LoadDetailed(keys, views_);
  EXPECT_EQ(r.status.code(), StatusCode::kInlineHeaderInvalid) << r.status.ToString();
  EXPECT_NE(r.status.message().find("key 'a' at location '" + meta::CacheManager::BlockIdHexForKey("a") +
                                    "' holds the block of 'b'"),
            std::string::npos)
      << r.status.ToString();
  EXPECT_NE(r.status.message().find("key 'b'"), std::string::npos) << r.status.ToString();
  EXPECT_EQ(r.misrouted, (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(r.faulty.empty()) << "a misrouted block is not a checksum mismatch";
  EXPECT_TRUE(mismatches_.empty());
  ASSERT_EQ(misroutes_.size(), 2u);
  EXPECT_EQ(r.misroutes.size(), 2u);
  EXPECT_EQ(client->MisroutedCounts()["nfs"], 2u);
  MetricsRegistry metrics;
  WriteTransferMetrics(*client, "nfs", metrics);
  EXPECT_NE(metrics.Render().find("kvchaos_client_misrouted_reads_total{storage=\"nfs\"} 2"), std::string::npos)
      << metrics.Render();
  // Scrub reports them as misrouted, not as mismatched.
  Result<TransferClient::ScrubReport> scrub = client->Scrub(keys, {});
  ASSERT_TRUE(scrub.ok()) << scrub.status().ToString();
  EXPECT_EQ(scrub->misrouted, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(scrub->mismatched.empty());
  EXPECT_EQ(scrub->verified, 1u);
}

// Without headers the same swap returns both blocks as good: what plan B is for.
TEST_P(InlineHeaderTransferTest, WithoutHeadersTheSameSwapGoesUnnoticed) {
  SetStorage(false);
  auto client = Client();
  ASSERT_NE(client, nullptr);
  MakeBlocks(2, /*same=*/true);
  const std::vector<std::string> keys{"a", "b"};
  ASSERT_TRUE(client->Save(keys, views_).ok());
  EXPECT_EQ(std::filesystem::file_size(FileOf("a")), kBlock) << "no header region without the header";
  EXPECT_EQ(RecordedVersion("a"), 0);
  SwapFiles("a", "b");
  EXPECT_TRUE(client->Load(keys, views_).ok());
}

TEST_P(InlineHeaderTransferTest, ADamagedHeaderIsCorruptionNotAChecksumMismatch) {
  SetStorage(true);
  auto client = Client();
  ASSERT_NE(client, nullptr);
  MakeBlocks(3);
  const std::vector<std::string> keys{"k0", "k1", "k2"};
  ASSERT_TRUE(client->Save(keys, views_).ok());
  std::vector<std::byte> header = HeaderBytesOf("k1");
  header[0] ^= std::byte{0x20};  // the magic
  WriteAt(FileOf("k1"), kBlock, header);
  std::vector<std::byte> other = HeaderBytesOf("k2");
  other[8] = std::byte{9};  // an unknown version
  WriteAt(FileOf("k2"), kBlock, other);
  LoadResult r = client->LoadDetailed(keys, views_);
  EXPECT_EQ(r.status.code(), StatusCode::kCorruption) << r.status.ToString();
  EXPECT_NE(r.status.message().find("'k1'"), std::string::npos) << r.status.ToString();
  EXPECT_NE(r.status.message().find("wrong magic"), std::string::npos) << r.status.ToString();
  EXPECT_EQ(r.corrupt_header, (std::vector<size_t>{1, 2}));
  EXPECT_TRUE(r.faulty.empty());
  EXPECT_TRUE(mismatches_.empty());
  EXPECT_EQ(r.verified, (std::vector<uint8_t>{1, 0, 0}));
}

// A header of another length (a torn block) and a file cut into its header are misses, as short
// files are: never data returned as good.
TEST_P(InlineHeaderTransferTest, AHeaderOfAnotherLengthOrACutHeaderIsAMiss) {
  SetStorage(true);
  auto client = Client();
  ASSERT_NE(client, nullptr);
  MakeBlocks(3);
  const std::vector<std::string> keys{"k0", "k1", "k2"};
  ASSERT_TRUE(client->Save(keys, views_).ok());
  std::vector<std::byte> torn(meta::InlineHeader::kBytes);
  meta::InlineHeader::For("k1", kBlock - kShard, std::nullopt, ChecksumAlgo::kUnspecified, {}).Encode(torn);
  WriteAt(FileOf("k1"), kBlock, torn);
  std::filesystem::resize_file(FileOf("k2"), kBlock + 100);
  LoadResult r = client->LoadDetailed(keys, views_);
  EXPECT_EQ(r.status.code(), StatusCode::kNotFound) << r.status.ToString();
  EXPECT_EQ(r.missing, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(r.torn, (std::vector<size_t>{1}));
  EXPECT_TRUE(r.faulty.empty());
  EXPECT_TRUE(r.misrouted.empty());
}

// A storage being upgraded: blocks from before the switch have no header and are read as before;
// blocks written after it are checked; switching it off again leaves those checked (each block is
// read by what its record says, nothing is rewritten).
TEST_P(InlineHeaderTransferTest, AStorageBeingUpgradedReadsEachBlockByWhatItIs) {
  SetStorage(false);
  MakeBlocks(4);
  const std::vector<std::string> old_keys{"old0", "old1"};
  const std::vector<std::string> new_keys{"new0", "new1"};
  const std::vector<BlockBuffers> old_views(views_.begin(), views_.begin() + 2);
  const std::vector<BlockBuffers> new_views(views_.begin() + 2, views_.end());
  {
    auto before = Client();
    ASSERT_NE(before, nullptr);
    ASSERT_TRUE(before->Save(old_keys, old_views).ok());
  }
  SetStorage(true);
  auto client = Client();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Save(new_keys, new_views).ok());
  EXPECT_EQ(RecordedVersion("old0"), 0);
  EXPECT_EQ(RecordedVersion("new0"), 1);
  EXPECT_EQ(std::filesystem::file_size(FileOf("old0")), kBlock) << "old blocks are not rewritten";
  const std::vector<std::string> all{"old0", "new0", "old1", "new1"};
  const std::vector<BlockBuffers> all_views{views_[0], views_[2], views_[1], views_[3]};
  LoadResult r = client->LoadDetailed(all, all_views);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.verified, (std::vector<uint8_t>{1, 1, 1, 1}));

  // Switched off again: the headed blocks keep being checked.
  SetStorage(false);
  auto after = Client();
  ASSERT_NE(after, nullptr);
  SwapFiles("new0", "new1");
  r = after->LoadDetailed(new_keys, new_views);
  EXPECT_EQ(r.status.code(), StatusCode::kInlineHeaderInvalid) << r.status.ToString();
  EXPECT_EQ(r.misrouted, (std::vector<size_t>{0, 1}));
}

INSTANTIATE_TEST_SUITE_P(Engines, InlineHeaderTransferTest,
                         ::testing::Values(store::IoEngineKind::kAio, store::IoEngineKind::kPsync),
                         [](const ::testing::TestParamInfo<store::IoEngineKind>& param) {
                           return param.param == store::IoEngineKind::kAio ? "aio" : "psync";
                         });

}  // namespace
}  // namespace kvchaos::client
