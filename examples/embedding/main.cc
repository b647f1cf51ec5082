// Embedding kvchaos in a service: save KV-cache blocks with end-to-end checksums and load them
// back verified, through client::CacheClient built from one config file. docs/embedding.md walks
// through this program.
//
//   kvchaos_embedding CLIENT_YAML [BLOCKS]
//
// CLIENT_YAML is a client config (core/client/client.example.yaml): the store's keys plus a
// `meta` section, either an in-process meta service (meta.indexer) or the nodes of a cluster
// (meta.nodes, e.g. the client.yaml that examples/cluster/local-cluster.sh writes). The program
// saves BLOCKS blocks (default 8), each given as four IOVs as an inference engine would hand over
// a block's layers, loads them into fresh buffers, and checks that every block was verified
// against its checksum and holds the bytes saved. Exit 0 when all did, 1 otherwise.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "core/client/cache_client.h"
#include "core/common/rng.h"

namespace {

constexpr size_t kIovsPerBlock = 4;

// A block's bytes and its IOVs: kIovsPerBlock equal views of one buffer.
struct Block {
  std::vector<std::byte> bytes;
  kvchaos::client::BlockBuffers iovs;
  explicit Block(uint64_t size) : bytes(size) {
    const uint64_t iov = size / kIovsPerBlock;
    for (size_t i = 0; i < kIovsPerBlock; ++i) {
      const uint64_t length = i + 1 < kIovsPerBlock ? iov : size - iov * (kIovsPerBlock - 1);
      iovs.push_back(std::span<std::byte>(bytes).subspan(i * iov, length));
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: kvchaos_embedding CLIENT_YAML [BLOCKS]\n";
    return 2;
  }
  const size_t count = argc == 3 ? std::strtoul(argv[2], nullptr, 10) : 8;

  // 1. One call builds the store, the meta client and the TransferClient from the config. Every
  //    mismatch the client finds is also passed here (a service would publish an event).
  kvchaos::client::TransferClientOptions options;
  options.on_mismatch = [](const kvchaos::client::ChecksumMismatchEvent& e) {
    std::cerr << "checksum mismatch: key " << e.key << " in storage " << e.storage << "\n";
  };
  auto opened = kvchaos::client::CacheClient::Open(argv[1], std::move(options));
  if (!opened.ok()) {
    std::cerr << "cannot open the client: " << opened.status().ToString() << "\n";
    return 1;
  }
  kvchaos::client::CacheClient& client = **opened;
  const uint64_t block_size = client.block_size();  // the store's block_size

  // 2. Save: keys and their blocks. Checksums are computed here and kept in meta.
  std::vector<std::string> keys;
  std::vector<Block> saved;
  std::vector<kvchaos::client::BlockBuffers> save_views;
  kvchaos::Rng rng(2024);
  saved.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    keys.push_back("request-17/layer-block-" + std::to_string(i));
    Block& b = saved.emplace_back(block_size);
    for (std::byte& x : b.bytes) x = static_cast<std::byte>(rng.NextU64());
    save_views.push_back(b.iovs);
  }
  auto result = client.Save(keys, save_views);
  if (!result.ok()) {
    std::cerr << "save failed: " << result.status().ToString() << "\n";
    return 1;
  }
  size_t written = 0;
  for (uint8_t w : result->written) written += w;
  std::cout << "saved " << written << " of " << count << " blocks of " << block_size << " bytes ("
            << count - written << " were already cached)\n";

  // 3. Load into fresh buffers: every block is verified against the checksum meta kept for it.
  std::vector<Block> loaded;
  std::vector<kvchaos::client::BlockBuffers> load_views;
  loaded.reserve(count);
  for (size_t i = 0; i < count; ++i) load_views.push_back(loaded.emplace_back(block_size).iovs);
  kvchaos::client::LoadResult load = client.Load(keys, load_views);
  if (!load.status.ok()) {
    // ChecksumMismatch: load.faulty lists the blocks whose buffers must be discarded.
    std::cerr << "load failed: " << load.status.ToString() << "\n";
    return 1;
  }
  size_t verified = 0, same = 0;
  for (size_t i = 0; i < count; ++i) {
    verified += load.verified[i];
    same += loaded[i].bytes == saved[i].bytes ? 1 : 0;
  }
  std::cout << "loaded " << count << " blocks: " << verified << " verified against their checksums ("
            << kvchaos::integrity::ChecksumAlgoName(client.transfer().storage_config().integrity.algo) << "), " << same
            << " hold the bytes saved\n";
  return verified == count && same == count ? 0 : 1;
}
