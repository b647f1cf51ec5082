// RebuildIndex (`kvchaos integrity rebuild`): blocks saved through a TransferClient with inline
// headers into a real PosixStore on temp dirs, the meta index then wiped (a fresh in-memory index,
// or a real redis-server restarted without persistence), and the index rebuilt from the blocks'
// headers alone. A rebuilt index must serve every key verified, equal to what the writer recorded;
// entries that disagree are reported with both sides and never overwritten; damaged, torn,
// headerless and misplaced blocks are reported and never indexed; a dry run writes nothing; a
// storage without headers is refused.
#include "core/client/index_rebuild.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/client/transfer_client.h"
#include "core/common/rng.h"
#include "core/meta/inline_header.h"
#include "core/meta/local_meta_indexer.h"
#include "core/meta/meta_indexer.h"
#include "core/store/block_id.h"
#include "core/store/posix_store.h"
#include "testing/redis_server.h"
#include "testing/temp_dir.h"

namespace kvchaos::client {
namespace {

using integrity::ChecksumAlgo;
using kvchaos::testing::TempDir;

constexpr uint64_t kShard = 16 << 10;
constexpr uint64_t kBlock = 2 * kShard;
constexpr size_t kKeys = 24;

class IndexRebuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* p : {"p0", "p1"}) {
      std::filesystem::create_directories(dir_.path() / p);
      config_.storage_backends.push_back((dir_.path() / p).string());
    }
    config_.block_size = kBlock;
    config_.shard_size = kShard;
    config_.tensor_size = kShard;
    Status s = store_.Setup(config_);
    ASSERT_TRUE(s.ok()) << s.ToString();
    OpenIndex(std::make_unique<meta::LocalMetaIndexer>());
    SetStorage("nfs", true);
    for (size_t i = 0; i < kKeys; ++i) keys_.push_back("model-a/layer-" + std::to_string(i));
  }

  // A fresh index: what is left after the index's Redis was wiped (its registry included).
  void OpenIndex(std::unique_ptr<meta::MetaIndexer> indexer) {
    meta_client_.reset();
    manager_.reset();
    registry_.reset();
    indexer_ = std::move(indexer);
    registry_ = std::make_unique<meta::StorageRegistry>(*indexer_);
    manager_ = std::make_unique<meta::CacheManager>(*indexer_, *registry_);
    meta_client_ = std::make_unique<InProcessMetaClient>(*manager_, *registry_);
  }

  void SetStorage(const std::string& name, bool header, ChecksumAlgo algo = ChecksumAlgo::kCrc64Full) {
    (void)registry_->RemoveStorage(name, 0);
    meta::StorageConfig c;
    c.type = "posix";
    c.global_unique_name = name;
    c.integrity.enable_meta_checksum = true;
    c.integrity.algo = algo;
    c.integrity.enable_inline_header = header;
    c.integrity.inline_header_version = header ? 1 : 0;
    Status s = registry_->AddStorage(c, 0);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  std::unique_ptr<TransferClient> Client(const std::string& storage = "nfs") {
    TransferClientOptions o;
    o.storage = storage;
    auto c = TransferClient::Create(*meta_client_, store_, o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  // kKeys blocks of random bytes in two IOVs (1000 bytes, the rest), saved; their entries kept.
  void SaveAll() {
    Rng rng(11);
    bytes_.assign(keys_.size(), std::vector<std::byte>(kBlock));
    std::vector<BlockBuffers> views;
    for (auto& b : bytes_) {
      for (auto& x : b) x = static_cast<std::byte>(rng.NextU64());
      views.push_back({std::span<std::byte>(b).first(1000), std::span<std::byte>(b).subspan(1000)});
    }
    auto client = Client();
    ASSERT_NE(client, nullptr);
    Result<SaveResult> saved = client->Save(keys_, views);
    ASSERT_TRUE(saved.ok()) << saved.status().ToString();
    original_ = Entries();
    for (size_t i = 0; i < keys_.size(); ++i) ASSERT_TRUE(original_[i].has_value()) << keys_[i];
  }

  std::vector<std::optional<meta::CacheLocation>> Entries(const std::vector<std::string>& keys) {
    auto locs = meta_client_->GetLocations(keys);
    EXPECT_TRUE(locs.ok()) << locs.status().ToString();
    return locs.ok() ? *locs : std::vector<std::optional<meta::CacheLocation>>(keys.size());
  }
  std::vector<std::optional<meta::CacheLocation>> Entries() { return Entries(keys_); }

  void WipeIndex() {
    OpenIndex(std::make_unique<meta::LocalMetaIndexer>());
    SetStorage("nfs", true);
  }

  IndexRebuildOptions Options() {
    IndexRebuildOptions o;
    o.storage = "nfs";
    o.backends = store_.config().storage_backends;
    o.block_size = kBlock;
    o.shard_width = store_.config().data_dir_shard_bytes;
    o.batch = 7;  // several batches, one of them partial
    return o;
  }

  IndexRebuildReport Rebuild(const IndexRebuildOptions& o) {
    Result<IndexRebuildReport> r = RebuildIndex(*meta_client_, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : IndexRebuildReport{};
  }
  IndexRebuildReport Rebuild() { return Rebuild(Options()); }

  // Every key loads, verified against its checksum, with the bytes that were saved.
  void ExpectAllLoadVerified(const std::vector<std::string>& keys) {
    auto client = Client();
    ASSERT_NE(client, nullptr);
    std::vector<std::vector<std::byte>> back(keys.size(), std::vector<std::byte>(kBlock));
    std::vector<BlockBuffers> into;
    for (auto& b : back) into.push_back({std::span<std::byte>(b).first(1000), std::span<std::byte>(b).subspan(1000)});
    LoadResult r = client->LoadDetailed(keys, into);
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    for (size_t i = 0; i < keys.size(); ++i) {
      const size_t at = static_cast<size_t>(std::find(keys_.begin(), keys_.end(), keys[i]) - keys_.begin());
      EXPECT_EQ(r.verified[i], 1) << keys[i] << " was returned without being verified against a checksum";
      EXPECT_TRUE(back[i] == bytes_[at]) << keys[i] << " loaded other bytes than were saved";
    }
  }

  std::filesystem::path FileOf(const std::string& key) {
    const auto id = *store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey(key));
    for (const std::string& backend : store_.config().storage_backends) {
      const std::string path = store::BlockPath(backend, id);
      if (std::filesystem::exists(path)) return path;
    }
    ADD_FAILURE() << "no file for " << key;
    return {};
  }

  static std::vector<const RebuildFinding*> Findings(const IndexRebuildReport& r, RebuildVerdict verdict) {
    std::vector<const RebuildFinding*> out;
    for (const RebuildFinding& f : r.findings) {
      if (f.verdict == verdict) out.push_back(&f);
    }
    return out;
  }

  static std::string AllLines(const IndexRebuildReport& r) {
    std::string out;
    for (const RebuildFinding& f : r.findings) out += FindingLine(f) + "\n";
    return out + r.Summary();
  }

  TempDir dir_{"kvchaos-rebuild"};
  store::PosixStoreConfig config_;
  store::PosixStore store_;
  std::unique_ptr<meta::MetaIndexer> indexer_;
  std::unique_ptr<meta::StorageRegistry> registry_;
  std::unique_ptr<meta::CacheManager> manager_;
  std::unique_ptr<InProcessMetaClient> meta_client_;
  std::vector<std::string> keys_;
  std::vector<std::vector<std::byte>> bytes_;
  std::vector<std::optional<meta::CacheLocation>> original_;
};

TEST_F(IndexRebuildTest, AfterAnIndexWipeEveryKeyIsBackAndLoadsVerified) {
  SaveAll();
  WipeIndex();
  for (const auto& e : Entries()) ASSERT_FALSE(e.has_value()) << "the wipe left an entry";

  IndexRebuildReport r = Rebuild();
  EXPECT_EQ(r.scanned, kKeys) << AllLines(r);
  EXPECT_EQ(r.rebuilt, kKeys) << AllLines(r);
  EXPECT_EQ(r.agreed, 0u);
  EXPECT_TRUE(r.clean()) << AllLines(r);
  EXPECT_EQ(Findings(r, RebuildVerdict::kRebuilt).size(), kKeys) << "one REBUILT line per key";
  const std::vector<std::optional<meta::CacheLocation>> rebuilt = Entries();
  for (size_t i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(rebuilt[i].has_value()) << keys_[i] << " has no entry after the rebuild";
    EXPECT_EQ(*rebuilt[i], *original_[i]) << keys_[i] << ": the rebuilt entry differs from the writer's: "
                                          << rebuilt[i]->ToJson().dump() << " vs " << original_[i]->ToJson().dump();
  }
  ExpectAllLoadVerified(keys_);

  // A second run finds everything in place and changes nothing.
  IndexRebuildReport again = Rebuild();
  EXPECT_EQ(again.rebuilt, 0u) << AllLines(again);
  EXPECT_EQ(again.agreed, kKeys) << AllLines(again);
  EXPECT_TRUE(again.clean()) << AllLines(again);
  EXPECT_NE(again.Summary().find("scanned 24 blocks in "), std::string::npos) << again.Summary();
  EXPECT_NE(again.Summary().find("rebuilt 0, agreed 24, conflicts 0, skipped 0"), std::string::npos)
      << again.Summary();
}

TEST_F(IndexRebuildTest, AKeyWhoseEntryAgreesIsLeftAloneAndOnlyTheLostOnesAreWritten) {
  SaveAll();
  // The index lost half its entries (a partial restore).
  std::vector<std::string> lost(keys_.begin(), keys_.begin() + kKeys / 2);
  ASSERT_TRUE(meta_client_->Remove(lost).ok());
  IndexRebuildReport r = Rebuild();
  EXPECT_EQ(r.rebuilt, kKeys / 2) << AllLines(r);
  EXPECT_EQ(r.agreed, kKeys / 2) << AllLines(r);
  for (const RebuildFinding* f : Findings(r, RebuildVerdict::kRebuilt)) {
    EXPECT_NE(std::find(lost.begin(), lost.end(), f->key), lost.end()) << f->key << " had an entry and was rewritten";
  }
  const auto now = Entries();
  for (size_t i = 0; i < kKeys; ++i) EXPECT_EQ(now[i], original_[i]) << keys_[i];
  ExpectAllLoadVerified(keys_);
}

TEST_F(IndexRebuildTest, DryRunReportsWhatItWouldRebuildAndWritesNothing) {
  SaveAll();
  WipeIndex();
  IndexRebuildOptions o = Options();
  o.dry_run = true;
  IndexRebuildReport r = Rebuild(o);
  EXPECT_EQ(r.rebuilt, kKeys) << AllLines(r);
  EXPECT_NE(r.Summary().find("(dry run: nothing written)"), std::string::npos) << r.Summary();
  for (const RebuildFinding* f : Findings(r, RebuildVerdict::kRebuilt)) {
    EXPECT_NE(f->detail.find("dry run"), std::string::npos) << FindingLine(*f);
  }
  for (const auto& e : Entries()) EXPECT_FALSE(e.has_value()) << "a dry run wrote " << e->ToJson().dump();
}

TEST_F(IndexRebuildTest, AnEntryThatDisagreesIsAConflictNamingBothAndIsNeverOverwritten) {
  SaveAll();
  WipeIndex();
  // key 1: the index says another checksum for its location; key 2: another storage serves it.
  const std::vector<std::string> one{keys_[1]}, two{keys_[2]};
  Result<meta::WriteSession> s1 = meta_client_->StartWrite(one, "nfs");
  ASSERT_TRUE(s1.ok()) << s1.status().ToString();
  ASSERT_TRUE(meta_client_->FinishWrite(s1->session_id, one, std::vector<int64_t>{0x1234}, {}).ok());
  SetStorage("other", true);
  Result<meta::WriteSession> s2 = meta_client_->StartWrite(two, "other");
  ASSERT_TRUE(s2.ok()) << s2.status().ToString();
  ASSERT_TRUE(meta_client_->FinishWrite(s2->session_id, two, std::vector<int64_t>{original_[2]->checksum}, {}).ok());
  const auto before = Entries();

  IndexRebuildReport r = Rebuild();
  EXPECT_EQ(r.conflicts, 2u) << AllLines(r);
  EXPECT_EQ(r.rebuilt, kKeys - 2) << AllLines(r);
  EXPECT_FALSE(r.clean());
  auto conflicts = Findings(r, RebuildVerdict::kConflict);
  ASSERT_EQ(conflicts.size(), 2u) << AllLines(r);
  for (const RebuildFinding* f : conflicts) {
    const std::string line = FindingLine(*f);
    EXPECT_NE(line.find("entry: storage="), std::string::npos) << "the index's side is not named: " << line;
    EXPECT_NE(line.find("block: storage=nfs location=" + meta::CacheManager::BlockIdHexForKey(f->key)),
              std::string::npos)
        << "the block's side is not named: " << line;
    EXPECT_NE(line.find("entry left as it is"), std::string::npos) << line;
  }
  const std::string first = FindingLine(*conflicts[0]) + FindingLine(*conflicts[1]);
  EXPECT_NE(first.find("checksum=0x0000000000001234"), std::string::npos) << first;
  EXPECT_NE(first.find("entry: storage=other"), std::string::npos) << first;
  const auto after = Entries();
  EXPECT_EQ(after[1], before[1]) << "the conflicting entry of " << keys_[1] << " was changed";
  EXPECT_EQ(after[2], before[2]) << "the conflicting entry of " << keys_[2] << " was changed";
}

TEST_F(IndexRebuildTest, DamagedTornHeaderlessAndMisplacedBlocksAreReportedAndNeverIndexed) {
  SaveAll();
  // 0: a header byte flipped; 1: a header of version 2; 2: cut inside its header; 3: grown past
  // it; 4: exactly block_size bytes (headerless); 5's file replaced by 6's bytes (misplaced);
  // 7: moved to another shard directory.
  auto poke = [](const std::filesystem::path& file, uint64_t at, char byte) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f) << file;
    f.seekp(static_cast<std::streamoff>(at));
    f.put(byte);
  };
  poke(FileOf(keys_[0]), kBlock + 100, '\x77');
  poke(FileOf(keys_[1]), kBlock + 8, '\x02');
  std::filesystem::resize_file(FileOf(keys_[2]), kBlock + 1000);
  std::filesystem::resize_file(FileOf(keys_[3]), kBlock + 4096 + 512);
  std::filesystem::resize_file(FileOf(keys_[4]), kBlock);
  const std::filesystem::path misplaced = FileOf(keys_[5]);
  std::filesystem::copy_file(FileOf(keys_[6]), misplaced, std::filesystem::copy_options::overwrite_existing);
  const std::filesystem::path stray_from = FileOf(keys_[7]);
  const std::string hex7 = meta::CacheManager::BlockIdHexForKey(keys_[7]);
  const std::string other_dir = hex7.substr(0, 3) == "fff" ? "000" : "fff";
  const std::filesystem::path stray = stray_from.parent_path().parent_path() / other_dir / hex7;
  std::filesystem::rename(stray_from, stray);
  // Temp files of writes in flight are no blocks.
  std::ofstream(misplaced.string() + ".tmp") << "partial";
  WipeIndex();

  IndexRebuildReport r = Rebuild();
  const std::string lines = AllLines(r);
  EXPECT_EQ(r.scanned, kKeys) << lines;
  EXPECT_EQ(r.bad_header, 2u) << lines;
  EXPECT_EQ(r.torn, 2u) << lines;
  EXPECT_EQ(r.no_header, 1u) << lines;
  EXPECT_EQ(r.misplaced, 2u) << lines;
  EXPECT_EQ(r.skipped, 7u) << lines;
  EXPECT_EQ(r.rebuilt, kKeys - 7) << lines;
  EXPECT_GE(r.ignored_files, 1u) << "the .tmp file was not counted as ignored";
  EXPECT_FALSE(r.clean());
  EXPECT_NE(lines.find("BADHEADER file=" + FileOf(keys_[0]).string() + " (inline header: its own checksum differs"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("unknown version 2"), std::string::npos) << lines;
  EXPECT_NE(lines.find("TORN file=" + FileOf(keys_[2]).string() + " (file of " + std::to_string(kBlock + 1000)),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("TORN key=" + keys_[3] + " file=" + FileOf(keys_[3]).string()), std::string::npos)
      << "a torn block whose header is readable is not named by its key:\n"
      << lines;
  EXPECT_NE(lines.find("NOHEADER file=" + FileOf(keys_[4]).string()), std::string::npos) << lines;
  EXPECT_NE(lines.find("MISPLACED key=" + keys_[6] + " file=" + misplaced.string()), std::string::npos) << lines;
  EXPECT_NE(lines.find("MISPLACED key=" + keys_[7] + " file=" + stray.string() + " (in shard directory '" + other_dir),
            std::string::npos)
      << lines;

  const auto now = Entries();
  for (size_t i : {0, 1, 2, 3, 4, 5, 7}) {
    EXPECT_FALSE(now[i].has_value()) << keys_[i] << " was indexed from a bad block: " << now[i]->ToJson().dump();
  }
  EXPECT_TRUE(now[6].has_value()) << keys_[6] << " (its own file is whole) was not rebuilt";
  std::vector<std::string> good(keys_.begin() + 8, keys_.end());
  good.push_back(keys_[6]);
  ExpectAllLoadVerified(good);
}

// The storage was registered again with another algorithm than its blocks were written with: an
// entry would label their checksums wrongly (every load a false mismatch), so none is written.
TEST_F(IndexRebuildTest, BlocksOfAnotherChecksumAlgorithmThanTheStoragesAreNotIndexed) {
  SetStorage("nfs", true, ChecksumAlgo::kCrc32XorInt64);
  SaveAll();
  WipeIndex();  // registered again with crc64_full
  IndexRebuildReport r = Rebuild();
  EXPECT_EQ(r.algo_mismatch, kKeys) << AllLines(r);
  EXPECT_EQ(r.rebuilt, 0u) << AllLines(r);
  EXPECT_FALSE(r.clean());
  auto lines = Findings(r, RebuildVerdict::kAlgoMismatch);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(FindingLine(*lines[0]).find("its header's checksum is crc32_xor_int64, the storage's algorithm is crc64_full"),
            std::string::npos)
      << FindingLine(*lines[0]);
  for (const auto& e : Entries()) EXPECT_FALSE(e.has_value()) << "indexed with the wrong algorithm: " << e->ToJson().dump();
}

TEST_F(IndexRebuildTest, AStorageWithoutInlineHeadersIsRefused) {
  SetStorage("nfs", false);
  Result<IndexRebuildReport> r = RebuildIndex(*meta_client_, Options());
  ASSERT_FALSE(r.ok()) << "a storage whose blocks do not describe themselves was rebuilt";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find("storage 'nfs' has inline headers off"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("self-describing"), std::string::npos) << r.status().ToString();

  IndexRebuildOptions unknown = Options();
  unknown.storage = "nope";
  Result<IndexRebuildReport> missing = RebuildIndex(*meta_client_, unknown);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'nope'"), std::string::npos) << missing.status().ToString();
}

TEST_F(IndexRebuildTest, KeysFromRebuildsOnlyTheListedKeysAndNamesLongOnes) {
  const std::string long_key = "model-a/" + std::string(meta::InlineHeader::kMaxStoredKeyBytes + 10, 'x');
  keys_.push_back(long_key);
  SaveAll();
  WipeIndex();
  IndexRebuildReport all = Rebuild();
  auto unknown = Findings(all, RebuildVerdict::kKeyUnknown);
  ASSERT_EQ(unknown.size(), 1u) << AllLines(all);
  EXPECT_NE(FindingLine(*unknown[0]).find("--keys-from"), std::string::npos) << FindingLine(*unknown[0]);
  EXPECT_EQ(all.rebuilt, kKeys);

  WipeIndex();
  IndexRebuildOptions o = Options();
  o.keys = std::vector<std::string>{keys_[3], long_key, "never-saved"};
  IndexRebuildReport some = Rebuild(o);
  EXPECT_EQ(some.rebuilt, 2u) << AllLines(some);
  EXPECT_EQ(some.not_listed, kKeys - 1) << AllLines(some);
  EXPECT_EQ(some.missing, 1u) << AllLines(some);
  EXPECT_TRUE(some.clean()) << "a listed key with no block is reported, not a failure: " << AllLines(some);
  EXPECT_NE(AllLines(some).find("MISSING key=never-saved"), std::string::npos) << AllLines(some);
  const auto now = Entries();
  for (size_t i = 0; i < keys_.size(); ++i) {
    const bool listed = keys_[i] == keys_[3] || keys_[i] == long_key;
    EXPECT_EQ(now[i].has_value(), listed) << keys_[i].substr(0, 40);
  }
  ExpectAllLoadVerified({keys_[3], long_key});
}

TEST_F(IndexRebuildTest, PathsThatReachTheSameDataCountEachBlockOnce) {
  // A second path to p0's data (as two mounts of one file system are).
  const std::filesystem::path alias = dir_.path() / "p0-alias";
  std::filesystem::create_directory_symlink(dir_.path() / "p0", alias);
  SaveAll();
  WipeIndex();
  IndexRebuildOptions o = Options();
  o.backends.push_back(alias.string());
  IndexRebuildReport r = Rebuild(o);
  EXPECT_EQ(r.scanned, kKeys) << AllLines(r);
  EXPECT_EQ(r.rebuilt, kKeys) << AllLines(r);
  EXPECT_GT(r.copies, 0u) << "p0's blocks were not seen through the alias";
  EXPECT_TRUE(r.clean()) << AllLines(r);
}

TEST_F(IndexRebuildTest, AnUnlistableBackendStopsTheRunNamingIt) {
  SaveAll();
  WipeIndex();
  IndexRebuildOptions o = Options();
  o.list_dir = [](const std::string& dir) -> Result<std::vector<std::string>> {
    return Status::IoError("opendir('" + dir + "') failed", EACCES);
  };
  Result<IndexRebuildReport> r = RebuildIndex(*meta_client_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("backend '" + o.backends[0] + "'"), std::string::npos) << r.status().ToString();
}

// Reads of one block file fail (a bad sector): it is reported IOERROR and not indexed; the run
// goes on with the others.
TEST_F(IndexRebuildTest, AFileThatCannotBeReadIsReportedAndTheOthersAreRebuilt) {
  SaveAll();
  WipeIndex();
  class FailingReads final : public store::ForwardingFileOps {
   public:
    explicit FailingReads(std::string path) : ForwardingFileOps(store::FileOps::Real()), path_(std::move(path)) {}
    int Open(const std::string& path, int flags, mode_t mode) override {
      const int fd = base_.Open(path, flags, mode);
      if (path == path_) bad_fd_ = fd;
      return fd;
    }
    ssize_t Pread(int fd, void* buf, size_t len, off_t offset) override {
      if (fd == bad_fd_) {
        errno = EIO;
        return -1;
      }
      return base_.Pread(fd, buf, len, offset);
    }
    int Close(int fd) override {
      if (fd == bad_fd_) bad_fd_ = -2;  // the number is reused by the next open
      return base_.Close(fd);
    }

   private:
    std::string path_;
    int bad_fd_ = -2;
  } failing(FileOf(keys_[4]).string());
  IndexRebuildOptions o = Options();
  o.file_ops = &failing;
  IndexRebuildReport r = Rebuild(o);
  EXPECT_EQ(r.io_errors, 1u) << AllLines(r);
  EXPECT_EQ(r.rebuilt, kKeys - 1) << AllLines(r);
  EXPECT_FALSE(r.clean());
  EXPECT_NE(AllLines(r).find("IOERROR file=" + FileOf(keys_[4]).string()), std::string::npos) << AllLines(r);
  EXPECT_NE(AllLines(r).find("Input/output error"), std::string::npos) << "the errno is not named:\n" << AllLines(r);
  EXPECT_FALSE(Entries()[4].has_value()) << "a block that could not be read was indexed";
}

// The index's Redis restarted without persistence: every entry and the registry gone.
TEST_F(IndexRebuildTest, AfterARedisWipeTheIndexIsRebuiltThroughTheFence) {
  auto redis = kvchaos::testing::RedisServer::Start();
  if (!redis) GTEST_SKIP() << kvchaos::testing::RedisServer::SkipReason();
  auto open = [&] {
    Result<std::unique_ptr<meta::MetaIndexer>> indexer = meta::OpenMetaIndexer(redis->uri());
    EXPECT_TRUE(indexer.ok()) << indexer.status().ToString();
    return indexer.ok() ? std::move(*indexer) : std::make_unique<meta::LocalMetaIndexer>();
  };
  OpenIndex(open());
  SetStorage("nfs", true);
  SaveAll();
  redis->Restart();
  OpenIndex(open());
  for (const auto& e : Entries()) ASSERT_FALSE(e.has_value()) << "the restart kept an entry";
  SetStorage("nfs", true);
  // The rebuilding process writes under a fence: a newer leader's token refuses it.
  ASSERT_TRUE(indexer_->RaiseFence(5).ok());
  Result<IndexRebuildReport> fenced = RebuildIndex(*meta_client_, Options());
  ASSERT_FALSE(fenced.ok()) << "a rebuild under a stale fencing token wrote entries";
  EXPECT_EQ(fenced.status().code(), StatusCode::kStaleFencingToken) << fenced.status().ToString();
  manager_->SetFencingToken(5);
  IndexRebuildReport r = Rebuild();
  EXPECT_EQ(r.rebuilt, kKeys) << AllLines(r);
  const auto now = Entries();
  for (size_t i = 0; i < kKeys; ++i) EXPECT_EQ(now[i], original_[i]) << keys_[i];
  ExpectAllLoadVerified(keys_);
}

}  // namespace
}  // namespace kvchaos::client
