// `kvchaos integrity rebuild` as an operator runs it: blocks saved with inline headers into a real
// PosixStore with a file-backed meta index, the index file then lost (the storage registered
// again, as after a wipe), and the CLI must bring every key back so that `integrity verify` checks
// them all; a dry run writes nothing; a torn block is printed and the exit status is 1; a storage
// without headers is refused with exit 2 naming why, and so is one that is not registered.
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

meta::StorageConfig Storage(bool headers) {
  meta::StorageConfig storage;
  storage.type = "posix";
  storage.global_unique_name = "nfs";
  storage.integrity.enable_meta_checksum = true;
  storage.integrity.algo = integrity::ChecksumAlgo::kCrc64Full;
  storage.integrity.enable_inline_header = headers;
  storage.integrity.inline_header_version = headers ? 1 : 0;
  return storage;
}

// A new index file holding only the storage's registration: what an operator has after the
// index was wiped and the storage registered again.
void FreshIndex(const std::string& meta_file, bool headers) {
  std::filesystem::remove(meta_file);
  auto indexer = meta::LocalMetaIndexer::Open(meta_file);
  ASSERT_TRUE(indexer.ok()) << indexer.status().ToString();
  meta::StorageRegistry registry(**indexer);
  ASSERT_TRUE(registry.AddStorage(Storage(headers), 0).ok());
}

TEST(IntegrityRebuildCli, BringsEveryKeyBackAfterTheIndexIsLost) {
  testing::TempDir dir("kvchaos-rebuild-cli");
  const std::string backend = (dir.path() / "p0").string();
  std::filesystem::create_directories(backend);
  const std::string meta_file = dir.str() + "/meta.json";
  const std::vector<std::string> keys{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"};
  {
    store::PosixStoreConfig config;
    config.storage_backends = {backend};
    config.block_size = config.shard_size = config.tensor_size = kBlock;
    config.shard_dirs_at_setup = false;  // 4096 directories per path would cost seconds per test
    store::PosixStore store;
    ASSERT_TRUE(store.Setup(config).ok());
    FreshIndex(meta_file, true);
    auto indexer = meta::LocalMetaIndexer::Open(meta_file);
    ASSERT_TRUE(indexer.ok());
    meta::StorageRegistry registry(**indexer);
    ASSERT_TRUE(registry.Recover().ok());
    meta::CacheManager manager(**indexer, registry);
    InProcessMetaClient meta_client(manager, registry);
    auto client = TransferClient::Create(meta_client, store, {"nfs", kBlock, kBlock});
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    Rng rng(5);
    std::vector<std::vector<std::byte>> bytes(keys.size(), std::vector<std::byte>(kBlock));
    std::vector<BlockBuffers> blocks;
    for (auto& b : bytes) {
      for (auto& x : b) x = static_cast<std::byte>(rng.NextU64());
      blocks.push_back({std::span<std::byte>(b).first(2048), std::span<std::byte>(b).subspan(2048)});
    }
    ASSERT_TRUE((*client)->Save(keys, blocks).ok());
  }
  const std::string yaml = dir.str() + "/client.yaml";
  std::ofstream(yaml) << "storage_backends: \"" << backend << "\"\nblock_size: 8192\nshard_size: 8192\n"
                      << "tensor_size: 8192\nmeta:\n  indexer: local://" << meta_file << "\n  storage: nfs\n";
  const std::string key_file = dir.str() + "/keys.txt";
  {
    std::ofstream out(key_file);
    for (const std::string& k : keys) out << k << "\n";
  }
  FreshIndex(meta_file, true);
  CliRun lost = RunCli("integrity verify --config " + yaml + " --keys-from " + key_file);
  EXPECT_NE(lost.output.find("6 missing"), std::string::npos) << "the wipe left entries:\n" << lost.output;

  CliRun dry = RunCli("integrity rebuild --dry-run --config " + yaml);
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("REBUILT key=beta file=" + backend), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("(dry run: not written)"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("rebuilt 6 (dry run: nothing written), agreed 0, conflicts 0, skipped 0"),
            std::string::npos)
      << dry.output;

  CliRun rebuilt = RunCli("integrity rebuild --config " + yaml);
  EXPECT_EQ(rebuilt.exit_code, 0) << rebuilt.output;
  EXPECT_NE(rebuilt.output.find("scanned 6 blocks in "), std::string::npos) << rebuilt.output;
  EXPECT_NE(rebuilt.output.find(" blocks/s), rebuilt 6, agreed 0, conflicts 0, skipped 0"), std::string::npos)
      << "the dry run wrote entries, or the rebuild missed some:\n"
      << rebuilt.output;
  CliRun verified = RunCli("integrity verify --config " + yaml + " --keys-from " + key_file);
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  EXPECT_NE(verified.output.find("6 verified"), std::string::npos) << verified.output;
  EXPECT_NE(verified.output.find("6 blocks checked with their stored IOV layout"), std::string::npos)
      << "the rebuilt entries lost the IOV layout:\n"
      << verified.output;
  CliRun again = RunCli("integrity rebuild --config " + yaml);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("rebuilt 0, agreed 6, conflicts 0, skipped 0"), std::string::npos) << again.output;

  // gamma torn, the index lost again: the others come back, gamma is printed, exit 1.
  const auto gamma = *store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey("gamma"));
  std::filesystem::resize_file(store::BlockPath(backend, gamma), kBlock + 100);
  FreshIndex(meta_file, true);
  CliRun torn = RunCli("integrity rebuild --config " + yaml);
  EXPECT_EQ(torn.exit_code, 1) << torn.output;
  EXPECT_NE(torn.output.find("TORN file=" + store::BlockPath(backend, gamma)), std::string::npos) << torn.output;
  EXPECT_NE(torn.output.find("rebuilt 5, agreed 0, conflicts 0, skipped 1"), std::string::npos) << torn.output;
  EXPECT_NE(torn.output.find("skipped: 0 bad header, 1 torn"), std::string::npos) << torn.output;

  // --keys-from: only the listed keys; a listed key without a block is printed. The torn block is
  // still reported (and the status is 1): its header cannot say whether it is a listed key's.
  FreshIndex(meta_file, true);
  std::ofstream(key_file) << "# two keys\nalpha\nnever-saved\n";
  CliRun some = RunCli("integrity rebuild --config " + yaml + " --keys-from " + key_file);
  EXPECT_EQ(some.exit_code, 1) << some.output;
  EXPECT_NE(some.output.find("TORN file="), std::string::npos) << some.output;
  EXPECT_NE(some.output.find("MISSING key=never-saved"), std::string::npos) << some.output;
  EXPECT_NE(some.output.find("rebuilt 1,"), std::string::npos) << some.output;
  EXPECT_NE(some.output.find("left alone: 4 blocks of keys not listed"), std::string::npos) << some.output;

  FreshIndex(meta_file, false);
  CliRun refused = RunCli("integrity rebuild --config " + yaml);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("storage 'nfs' has inline headers off"), std::string::npos) << refused.output;
  EXPECT_EQ(refused.output.find("REBUILT"), std::string::npos) << refused.output;

  std::filesystem::remove(meta_file);
  CliRun unregistered = RunCli("integrity rebuild --config " + yaml);
  EXPECT_EQ(unregistered.exit_code, 2) << unregistered.output;
  EXPECT_NE(unregistered.output.find("must be registered"), std::string::npos) << unregistered.output;
}

}  // namespace
}  // namespace kvchaos::client
