// Helpers shared by the PosixStore tests: temp backends, configs, block contents and thread counts.
#pragma once

#include <dirent.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/store/aligned_buffer.h"
#include "core/store/block_id.h"
#include "core/store/store.h"
#include "core/store/store_config.h"
#include "testing/temp_dir.h"

namespace kvchaos::store::testing {

inline BlockId MakeId(uint64_t n) {
  BlockId id;
  for (int i = 0; i < 8; ++i) id.bytes[i] = static_cast<uint8_t>(n >> (8 * i));
  id.bytes[15] = 0x5a;
  return id;
}

// A block id whose primary (hash % n) is `primary`.
inline BlockId IdWithPrimary(int primary, int n, uint64_t start = 0) {
  for (uint64_t i = start;; ++i) {
    BlockId id = MakeId(i);
    if (static_cast<int>(BlockIdHasher{}(id) % n) == primary) return id;
  }
}

inline void Fill(AlignedBuffer& buf, uint64_t seed) {
  for (size_t i = 0; i < buf.size(); ++i) buf.data()[i] = static_cast<std::byte>((seed * 131 + i * 7 + (i >> 8)) & 0xff);
}

// Files (recursively) under `dir`, as paths relative to it, sorted.
inline std::vector<std::string> FilesUnder(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(std::filesystem::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline int ThreadsNamed(const std::string& name) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(e.path() / "comm");
    std::string comm;
    std::getline(in, comm);
    if (comm == name) ++n;
  }
  return n;
}

// Polls `cond` every 5 ms for up to `limit`; true when it held.
inline bool Eventually(const std::function<bool()>& cond, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

// The tests' store config over `paths`: two 8 KiB shards per block, four in flight.
inline PosixStoreConfig ConfigFor(const std::vector<std::string>& paths, IoEngineKind engine, int64_t timeout_ms = 0) {
  PosixStoreConfig cfg;
  cfg.storage_backends = paths;
  cfg.io_engine = engine;
  cfg.io_direct = engine == IoEngineKind::kAio;
  cfg.timeout_ms = timeout_ms;
  cfg.block_size = 2 * 8192;
  cfg.shard_size = 8192;
  cfg.tensor_size = 4096;
  cfg.concurrency = 4;
  // 4096 mkdirs (and their removal) per test; the tests of the setup layout turn it back on.
  cfg.shard_dirs_at_setup = false;
  // Short enough for fast tests, long enough that a real probe (with fsync) never times out.
  cfg.health.health_check_interval_s = 0.05;
  cfg.health.health_check_timeout_s = 0.04;
  return cfg;
}

// `n` backends under a temp dir. shared=true makes them symlinks to one data directory — access
// paths to the same data, as in production — otherwise each is its own directory.
class Backends {
 public:
  Backends(int n, bool shared) {
    if (shared) std::filesystem::create_directory(dir_.path() / "data");
    for (int i = 0; i < n; ++i) {
      const auto p = dir_.path() / ("p" + std::to_string(i));
      if (shared) std::filesystem::create_directory_symlink(dir_.path() / "data", p);
      else std::filesystem::create_directory(p);
      paths_.push_back(p.string());
    }
  }
  const std::vector<std::string>& paths() const { return paths_; }
  const std::string& operator[](int i) const { return paths_[i]; }
  std::filesystem::path root() const { return dir_.path(); }

  PosixStoreConfig Config(IoEngineKind engine, int64_t timeout_ms = 0) const {
    return ConfigFor(paths_, engine, timeout_ms);
  }

 private:
  kvchaos::testing::TempDir dir_{"kvchaos_store"};
  std::vector<std::string> paths_;
};

// A block of `shards` shards, each two tensors of 4096 bytes in its own aligned buffers.
struct BlockData {
  BlockData(BlockId block_id, uint64_t seed, int shards = 2) : id(block_id) {
    for (int s = 0; s < shards; ++s) {
      for (int t = 0; t < 2; ++t) {
        tensors.push_back(std::make_unique<AlignedBuffer>(4096));
        Fill(*tensors.back(), seed * 16 + s * 2 + t);
      }
    }
  }
  Shard ShardAt(uint32_t index) {
    return Shard{id, index, {tensors[2 * index]->span(), tensors[2 * index + 1]->span()}};
  }
  TransferTask All() {
    TransferTask task;
    for (uint32_t s = 0; s < tensors.size() / 2; ++s) task.shards.push_back(ShardAt(s));
    return task;
  }
  void Set(std::byte value) {
    for (auto& t : tensors) std::memset(t->data(), static_cast<int>(value), t->size());
  }
  bool Equals(const BlockData& other) const {
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (std::memcmp(tensors[i]->data(), other.tensors[i]->data(), 4096) != 0) return false;
    }
    return true;
  }
  bool AllBytes(std::byte value) const {
    for (const auto& t : tensors) {
      for (size_t i = 0; i < t->size(); ++i) {
        if (t->data()[i] != value) return false;
      }
    }
    return true;
  }
  BlockId id;
  std::vector<std::unique_ptr<AlignedBuffer>> tensors;
};

// Writes a block's file straight into `backend` (as a peer with the same layout would).
inline void PlaceBlock(const std::string& backend, const BlockData& block) {
  std::filesystem::create_directories(BlockDir(backend, block.id));
  std::ofstream out(BlockPath(backend, block.id), std::ios::binary);
  for (const auto& t : block.tensors) out.write(reinterpret_cast<const char*>(t->data()), 4096);
}

// Dumps or loads every shard of `block` in one task; the task's status.
inline Status DumpAll(Store& store, BlockData& block) {
  Result<TaskHandle> h = store.Dump(block.All());
  if (!h.ok()) return h.status();
  return store.Wait(*h);
}
inline Status LoadAll(Store& store, BlockData& block) {
  Result<TaskHandle> h = store.Load(block.All());
  if (!h.ok()) return h.status();
  return store.Wait(*h);
}

// The block temp files among `files` (not the recovery probe's, which a probe removes itself).
inline std::vector<std::string> BlockTempFiles(const std::vector<std::string>& files) {
  std::vector<std::string> out;
  for (const std::string& f : files) {
    const bool tmp = f.size() > 4 && f.compare(f.size() - 4, 4, ".tmp") == 0;
    if (tmp && std::filesystem::path(f).filename().string().rfind(".probe", 0) != 0) out.push_back(f);
  }
  return out;
}
inline std::vector<std::string> TempFilesUnder(const std::string& dir) { return BlockTempFiles(FilesUnder(dir)); }

}  // namespace kvchaos::store::testing
