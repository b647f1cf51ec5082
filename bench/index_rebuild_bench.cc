// What `kvchaos integrity rebuild` (client::RebuildIndex) takes: blocks are saved once with inline
// headers (crc64_full, 16 IOVs each) into a PosixStore on tmpfs or a disk directory, and every
// iteration wipes the meta index (not timed) and rebuilds it from the blocks' headers. Cases:
//   memory      an in-memory index: the scan, the header reads and the fenced meta calls
//   local_file  a local:// file index, which rewrites its file on every batch (a single node's)
//   dry_run     the scan and the lookups alone, nothing written
// Counters: blocks/s (block files scanned per second) and rebuilt (entries per rebuild).
//
//   build/default/bench/index_rebuild_bench [--benchmark_repetitions=3]
//   KVCHAOS_REBUILD_BLOCKS=20000 KVCHAOS_REBUILD_BLOCK_SIZE=65536 KVCHAOS_REBUILD_DIR=/dev/shm
//
// The block files were just written, so their headers are read from the page cache; a cold scan
// of a disk also pays a seek per block. Needs blocks x (block size + 4 KiB) free in the directory.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/client/index_rebuild.h"
#include "core/client/transfer_client.h"
#include "core/common/rng.h"
#include "core/meta/cache_manager.h"
#include "core/meta/local_meta_indexer.h"
#include "core/meta/storage_registry.h"
#include "core/store/posix_store.h"

namespace kvchaos {
namespace {

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

meta::StorageConfig HeadedStorage() {
  meta::StorageConfig c;
  c.type = "posix";
  c.global_unique_name = "bench";
  c.integrity.enable_meta_checksum = true;
  c.integrity.algo = integrity::ChecksumAlgo::kCrc64Full;
  c.integrity.enable_inline_header = true;
  c.integrity.inline_header_version = 1;
  return c;
}

// An index and the in-process meta service over it, as CacheClient builds one.
struct Meta {
  explicit Meta(std::unique_ptr<meta::MetaIndexer> idx) : indexer(std::move(idx)) {
    registry = std::make_unique<meta::StorageRegistry>(*indexer);
    manager = std::make_unique<meta::CacheManager>(*indexer, *registry);
    client = std::make_unique<client::InProcessMetaClient>(*manager, *registry);
    if (!registry->AddStorage(HeadedStorage(), 0).ok()) std::abort();
  }
  std::unique_ptr<meta::MetaIndexer> indexer;
  std::unique_ptr<meta::StorageRegistry> registry;
  std::unique_ptr<meta::CacheManager> manager;
  std::unique_ptr<client::InProcessMetaClient> client;
};

// The saved blocks, shared by every case (saving them is not what is measured).
struct SavedStorage {
  SavedStorage() {
    const char* base = std::getenv("KVCHAOS_REBUILD_DIR");
    root = std::filesystem::path(base != nullptr && *base != '\0' ? base : "/dev/shm") / "kvchaos-rebuild-bench";
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root / "p0");
    blocks = EnvOr("KVCHAOS_REBUILD_BLOCKS", 20000);
    block_size = EnvOr("KVCHAOS_REBUILD_BLOCK_SIZE", 64 << 10);
    store::PosixStoreConfig config;
    config.storage_backends = {(root / "p0").string()};
    config.block_size = config.shard_size = config.tensor_size = block_size;
    if (Status s = store.Setup(config); !s.ok()) {
      std::fprintf(stderr, "index_rebuild_bench: store: %s\n", s.ToString().c_str());
      std::abort();
    }
    Meta writer(std::make_unique<meta::LocalMetaIndexer>());
    auto transfer = client::TransferClient::Create(*writer.client, store, {"bench", 0, 0});
    if (!transfer.ok()) std::abort();
    constexpr size_t kBatch = 256, kIovs = 16;
    std::vector<std::vector<std::byte>> bytes(kBatch, std::vector<std::byte>(block_size));
    Rng rng(3);
    for (auto& b : bytes) {
      for (auto& x : b) x = static_cast<std::byte>(rng.NextU64());
    }
    std::vector<client::BlockBuffers> views;
    for (auto& b : bytes) {
      client::BlockBuffers iovs;
      for (size_t i = 0; i < kIovs; ++i) iovs.push_back(std::span<std::byte>(b).subspan(i * block_size / kIovs, block_size / kIovs));
      views.push_back(iovs);
    }
    for (uint64_t start = 0; start < blocks; start += kBatch) {
      std::vector<std::string> keys;
      for (uint64_t i = start; i < std::min<uint64_t>(blocks, start + kBatch); ++i) {
        keys.push_back("model/layer-" + std::to_string(i % 80) + "/block-" + std::to_string(i));
      }
      Result<client::SaveResult> saved =
          (*transfer)->Save(keys, std::span<const client::BlockBuffers>(views.data(), keys.size()));
      if (!saved.ok()) {
        std::fprintf(stderr, "index_rebuild_bench: save: %s\n", saved.status().ToString().c_str());
        std::abort();
      }
    }
  }
  ~SavedStorage() { std::filesystem::remove_all(root); }

  client::IndexRebuildOptions Options(bool dry_run) {
    client::IndexRebuildOptions o;
    o.storage = "bench";
    o.backends = store.config().storage_backends;
    o.block_size = block_size;
    o.dry_run = dry_run;
    return o;
  }

  std::filesystem::path root;
  uint64_t blocks = 0;
  uint64_t block_size = 0;
  store::PosixStore store;
};

SavedStorage& Saved() {
  static SavedStorage saved;
  return saved;
}

enum class Index { kMemory, kLocalFile, kDryRun };

void BM_Rebuild(benchmark::State& state, Index kind) {
  SavedStorage& saved = Saved();
  const std::string file = (saved.root / "meta.json").string();
  uint64_t scanned = 0, rebuilt = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove(file);
    std::unique_ptr<meta::MetaIndexer> indexer;
    if (kind == Index::kLocalFile) {
      auto opened = meta::LocalMetaIndexer::Open(file);
      if (!opened.ok()) std::abort();
      indexer = std::move(*opened);
    } else {
      indexer = std::make_unique<meta::LocalMetaIndexer>();
    }
    Meta wiped(std::move(indexer));
    state.ResumeTiming();
    Result<client::IndexRebuildReport> r = client::RebuildIndex(*wiped.client, saved.Options(kind == Index::kDryRun));
    if (!r.ok() || r->scanned != saved.blocks || r->rebuilt != saved.blocks || !r->clean()) {
      state.SkipWithError(r.ok() ? r->Summary().c_str() : r.status().ToString().c_str());
      break;
    }
    scanned += r->scanned;
    rebuilt = r->rebuilt;
  }
  state.counters["blocks/s"] = benchmark::Counter(static_cast<double>(scanned), benchmark::Counter::kIsRate);
  state.counters["rebuilt"] = static_cast<double>(rebuilt);
  state.counters["block_KiB"] = static_cast<double>(saved.block_size >> 10);
}

BENCHMARK_CAPTURE(BM_Rebuild, memory, Index::kMemory)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_Rebuild, local_file, Index::kLocalFile)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_Rebuild, dry_run, Index::kDryRun)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace
}  // namespace kvchaos

BENCHMARK_MAIN();
