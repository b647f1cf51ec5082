// `kvchaos integrity verify` as an operator runs it: blocks saved through a TransferClient into a
// real PosixStore with a file-backed meta index, one stored byte flipped, then the CLI must name
// the corrupt key, count the others as verified and exit 1; a clean scrub exits 0; a bad config
// exits 2 naming the key. The config's meta.iov_size is deliberately not the writer's: blocks are
// read with the layout stored with their checksums, and the summary says so.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/client/transfer_client.h"
#include "core/common/rng.h"
#include "core/meta/local_meta_indexer.h"
#include "core/store/block_id.h"
#include "core/store/posix_store.h"
#include "testing/temp_dir.h"

namespace kvchaos::client {
namespace {

constexpr uint64_t kBlock = 8192;
constexpr uint64_t kIov = 2048;

struct CliRun {
  int exit_code = -1;
  std::string output;
};

CliRun RunCli(const std::string& args) {
  CliRun run;
  const std::string cmd = std::string(KVCHAOS_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return run;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.output.append(buf, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(IntegrityVerifyCli, NamesTheCorruptKeyAndExitsOne) {
  testing::TempDir dir("kvchaos-scrub");
  const std::string backend = (dir.path() / "p0").string();
  std::filesystem::create_directories(backend);
  const std::string meta_file = dir.str() + "/meta.json";
  const std::vector<std::string> keys{"alpha", "beta", "gamma"};
  {
    store::PosixStoreConfig config;
    config.storage_backends = {backend};
    config.block_size = config.shard_size = config.tensor_size = kBlock;
    config.shard_dirs_at_setup = false;  // 4096 directories per path would cost seconds per test
    store::PosixStore store;
    ASSERT_TRUE(store.Setup(config).ok());
    auto indexer = meta::LocalMetaIndexer::Open(meta_file);
    ASSERT_TRUE(indexer.ok());
    meta::StorageRegistry registry(**indexer);
    meta::StorageConfig storage;
    storage.type = "posix";
    storage.global_unique_name = "nfs";
    storage.integrity.enable_meta_checksum = true;
    storage.integrity.algo = integrity::ChecksumAlgo::kCrc64Full;
    ASSERT_TRUE(registry.AddStorage(storage, 0).ok());
    meta::CacheManager manager(**indexer, registry);
    InProcessMetaClient meta_client(manager, registry);
    auto client = TransferClient::Create(meta_client, store, {"nfs", kBlock, kBlock});
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    Rng rng(9);
    std::vector<std::vector<std::byte>> bytes(3, std::vector<std::byte>(kBlock));
    std::vector<BlockBuffers> blocks;
    for (auto& b : bytes) {
      for (auto& x : b) x = static_cast<std::byte>(rng.NextU64());
      BlockBuffers iovs;
      for (uint64_t off = 0; off < kBlock; off += kIov) iovs.push_back(std::span<std::byte>(b).subspan(off, kIov));
      blocks.push_back(iovs);
    }
    ASSERT_TRUE((*client)->Save(keys, blocks).ok());
  }
  const std::string yaml = dir.str() + "/store.yaml";
  std::ofstream(yaml) << "storage_backends: \"" << backend << "\"\nblock_size: 8192\nshard_size: 8192\n"
                      << "tensor_size: 8192\nmeta:\n  indexer: local://" << meta_file
                      << "\n  storage: nfs\n  iov_size: 4KiB\n";  // the writer cut 2 KiB IOVs
  const std::string key_file = dir.str() + "/keys.txt";
  std::ofstream(key_file) << "# keys to scrub\nalpha\nbeta\n\ngamma\nnever-written\n";

  CliRun clean = RunCli("integrity verify --config " + yaml + " --keys-from " + key_file);
  EXPECT_EQ(clean.exit_code, 0) << clean.output;
  EXPECT_NE(clean.output.find("3 verified"), std::string::npos) << clean.output;
  EXPECT_NE(clean.output.find("MISSING key=never-written"), std::string::npos) << clean.output;
  EXPECT_NE(clean.output.find("layouts: 3 blocks checked with their stored IOV layout, 0 with an assumed one "
                              "(meta.iov_size 4096 bytes)"),
            std::string::npos)
      << clean.output;
  EXPECT_EQ(clean.output.find("MISMATCH"), std::string::npos) << "a wrong iov_size raised a false alarm:\n"
                                                              << clean.output;

  const auto id = *store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey("beta"));
  {
    std::fstream f(store::BlockPath(backend, id), std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f);
    f.seekp(4000);
    f.put('\x5a');
  }
  CliRun bad = RunCli("integrity verify --config " + yaml + " --keys-from " + key_file);
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("MISMATCH key=beta"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("2 verified"), std::string::npos) << bad.output;
  EXPECT_EQ(bad.output.find("MISMATCH key=alpha"), std::string::npos) << bad.output;

  // gamma's file left short by a crash: reported as lost (exit 1) and its entry dropped, so the
  // next scrub sees a plain miss; --keep-lost reports without dropping.
  const auto gamma = *store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey("gamma"));
  std::filesystem::resize_file(store::BlockPath(backend, gamma), 4096);
  CliRun kept = RunCli("integrity verify --keep-lost --config " + yaml + " --keys-from " + key_file);
  EXPECT_EQ(kept.exit_code, 1) << kept.output;
  EXPECT_NE(kept.output.find("LOST key=gamma location=" + gamma.Hex()), std::string::npos) << kept.output;
  EXPECT_NE(kept.output.find("entry kept"), std::string::npos) << kept.output;
  CliRun lost = RunCli("integrity verify --config " + yaml + " --keys-from " + key_file);
  EXPECT_EQ(lost.exit_code, 1) << lost.output;
  EXPECT_NE(lost.output.find("LOST key=gamma"), std::string::npos) << "--keep-lost dropped the entry:\n" << lost.output;
  EXPECT_NE(lost.output.find("index entry dropped"), std::string::npos) << lost.output;
  EXPECT_NE(lost.output.find("2 missing (1 of them lost from the store)"), std::string::npos) << lost.output;
  CliRun after = RunCli("integrity verify --config " + yaml + " --keys-from " + key_file);
  EXPECT_NE(after.output.find("MISSING key=gamma"), std::string::npos) << after.output;
  EXPECT_EQ(after.output.find("LOST"), std::string::npos) << "the dropped entry is still listed:\n" << after.output;

  std::ofstream(yaml) << "storage_backends: \"" << backend << "\"\nblock_size: 8192\nshard_size: 8192\n"
                      << "tensor_size: 8192\nmeta:\n  indexer: local://" << meta_file << "\n";
  CliRun config_error = RunCli("integrity verify --config " + yaml + " --keys-from " + key_file);
  EXPECT_EQ(config_error.exit_code, 2) << config_error.output;
  EXPECT_NE(config_error.output.find("meta.storage"), std::string::npos) << config_error.output;
}

}  // namespace
}  // namespace kvchaos::client
