// `kvchaos store bench --integrity`: saves and loads through TransferClient (see the header).
#include "tools/kvchaos/transfer_bench.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "core/client/meta_client.h"
#include "core/client/transfer_client.h"
#include "core/common/rng.h"
#include "core/common/units.h"
#include "core/meta/cache_manager.h"
#include "core/meta/local_meta_indexer.h"
#include "core/meta/storage_registry.h"
#include "core/store/aligned_buffer.h"

namespace kvchaos::cli {
namespace {

constexpr const char* kBenchStorage = "bench";

// One phase's outcome over every batch.
struct Phase {
  double seconds = 0;
  uint64_t failed = 0;  // blocks of failed calls
  Status first_error;
};

void Print(const char* name, const Phase& p, uint64_t blocks, uint64_t block_size) {
  if (p.failed >= blocks) {
    std::printf("%s: every block failed (%.3f s): no throughput\n", name, p.seconds);
    return;
  }
  const double bytes = static_cast<double>(block_size) * static_cast<double>(blocks - p.failed);
  std::printf("%s: %.3f GB/s (%.3f s, %llu failed)\n", name, bytes / p.seconds / 1e9, p.seconds,
              static_cast<unsigned long long>(p.failed));
}

void Fill(store::AlignedBuffer& buf, uint64_t seed, uint64_t block) {
  Rng rng = Rng(seed).Split("transfer bench").Split(block);
  auto* words = reinterpret_cast<uint64_t*>(buf.data());
  for (size_t i = 0; i < buf.size() / 8; ++i) words[i] = rng.NextU64();
}

// Saves or loads one batch: through the client, or the same store tasks the client would issue.
class Mover {
 public:
  virtual ~Mover() = default;
  virtual Status Save(std::span<const std::string> keys, std::span<const client::BlockBuffers> blocks) = 0;
  virtual Status Load(std::span<const std::string> keys, std::span<const client::BlockBuffers> blocks) = 0;
};

class RawMover final : public Mover {
 public:
  explicit RawMover(store::Store& store) : store_(store) {}
  Status Save(std::span<const std::string> keys, std::span<const client::BlockBuffers> blocks) override {
    store::TransferTask task;
    for (size_t i = 0; i < keys.size(); ++i) task.shards.push_back({IdOf(keys[i]), 0, blocks[i]});
    Result<store::TaskHandle> h = store_.Dump(std::move(task));
    return h.ok() ? store_.Wait(*h) : h.status();
  }
  Status Load(std::span<const std::string> keys, std::span<const client::BlockBuffers> blocks) override {
    std::vector<Result<store::TaskHandle>> handles;
    for (size_t i = 0; i < keys.size(); ++i) {
      handles.push_back(store_.Load(store::TransferTask{{store::Shard{IdOf(keys[i]), 0, blocks[i]}}}));
    }
    Status first;
    for (auto& h : handles) {
      const Status s = h.ok() ? store_.Wait(*h) : h.status();
      if (first.ok()) first = s;
    }
    return first;
  }

 private:
  static store::BlockId IdOf(const std::string& key) {
    return *store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey(key));
  }
  store::Store& store_;
};

class ClientMover final : public Mover {
 public:
  explicit ClientMover(client::TransferClient& client) : client_(client) {}
  Status Save(std::span<const std::string> keys, std::span<const client::BlockBuffers> blocks) override {
    Result<client::SaveResult> saved = client_.Save(keys, blocks);
    if (!saved.ok()) return saved.status();
    for (uint8_t w : saved->written) {
      if (w == 0) return Status::Internal("a fresh key was already cached (the bench's keys are not its own)");
    }
    return Status::Ok();
  }
  Status Load(std::span<const std::string> keys, std::span<const client::BlockBuffers> blocks) override {
    return client_.Load(keys, blocks);
  }

 private:
  client::TransferClient& client_;
};

}  // namespace

Status CheckTransferBenchOptions(const TransferBenchOptions& o, uint64_t block_size) {
  integrity::ChecksumAlgo algo;
  if (o.integrity != "raw" && o.integrity != "off" && !integrity::ChecksumAlgoFromName(o.integrity, &algo)) {
    return Status::InvalidArgument("--integrity: must be raw, off, crc32_xor_int64 or crc64_full, got '" +
                                   o.integrity + "'");
  }
  if (o.batch == 0 || o.batch > 4096) return Status::InvalidArgument("--batch: must be 1..4096");
  if (o.inline_header && o.integrity == "raw") {
    return Status::InvalidArgument("--inline-header: only through TransferClient (not with --integrity raw)");
  }
  if (o.iovs == 0 || block_size % o.iovs != 0 || (block_size / o.iovs) % 8 != 0) {
    return Status::InvalidArgument("--iovs " + std::to_string(o.iovs) + ": must divide the block size " +
                                   std::to_string(block_size) + " into IOVs of a multiple of 8 bytes");
  }
  return Status::Ok();
}

int RunTransferBench(store::PosixStore& posix, const TransferBenchOptions& o) {
  const uint64_t block_size = posix.config().block_size;
  const bool raw = o.integrity == "raw";
  meta::LocalMetaIndexer indexer;
  meta::StorageRegistry registry(indexer);
  meta::CacheManager manager(indexer, registry);
  client::InProcessMetaClient meta_client(manager, registry);
  std::unique_ptr<client::TransferClient> transfer;
  std::unique_ptr<Mover> mover;
  if (raw) {
    mover = std::make_unique<RawMover>(posix);
  } else {
    meta::StorageConfig storage;
    storage.type = "posix";
    storage.global_unique_name = kBenchStorage;
    storage.integrity.enable_meta_checksum = o.integrity != "off";
    if (storage.integrity.enable_meta_checksum) (void)integrity::ChecksumAlgoFromName(o.integrity, &storage.integrity.algo);
    storage.integrity.enable_inline_header = o.inline_header;
    storage.integrity.inline_header_version = o.inline_header ? 1 : 0;
    if (Status s = registry.AddStorage(storage, 0); !s.ok()) {
      std::fprintf(stderr, "kvchaos store bench: %s\n", s.ToString().c_str());
      return 1;
    }
    client::TransferClientOptions options;
    options.storage = kBenchStorage;
    options.checksum_threads = o.checksum_threads;
    Result<std::unique_ptr<client::TransferClient>> created = client::TransferClient::Create(meta_client, posix, options);
    if (!created.ok()) {
      std::fprintf(stderr, "kvchaos store bench: %s\n", created.status().ToString().c_str());
      return 1;
    }
    transfer = std::move(*created);
    mover = std::make_unique<ClientMover>(*transfer);
  }

  const uint64_t batch = std::min(o.batch, o.blocks);
  std::vector<std::unique_ptr<store::AlignedBuffer>> buffers;
  std::vector<client::BlockBuffers> views(batch);
  const uint64_t iov_size = block_size / o.iovs;
  for (uint64_t b = 0; b < batch; ++b) {
    buffers.push_back(std::make_unique<store::AlignedBuffer>(block_size));
    Fill(*buffers.back(), o.seed, b);
    for (uint64_t v = 0; v < o.iovs; ++v) views[b].push_back(buffers.back()->span().subspan(v * iov_size, iov_size));
  }
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < o.blocks; ++i) keys.push_back("bench-" + std::to_string(o.seed) + "-" + std::to_string(i));

  std::printf("transfer bench: %llu blocks x %s in %llu IOV(s), batches of %llu, %s", 
              static_cast<unsigned long long>(o.blocks), FormatBytes(block_size).c_str(),
              static_cast<unsigned long long>(o.iovs), static_cast<unsigned long long>(batch),
              raw ? "straight on the store (raw)" : "through TransferClient");
  if (!raw) {
    std::printf(", integrity %s, inline header %s, %zu checksum thread(s)", o.integrity.c_str(),
                o.inline_header ? "on" : "off", transfer->checksum_threads());
  }
  std::printf("\n");

  // Each phase moves every block, batch after batch; `prepare` runs before a batch (untimed).
  auto run = [&](bool save, auto prepare, auto check) {
    Phase phase;
    for (uint64_t start = 0; start < o.blocks; start += batch) {
      const uint64_t n = std::min(batch, o.blocks - start);
      prepare(start, n);
      const std::span<const std::string> batch_keys(keys.data() + start, n);
      const std::span<const client::BlockBuffers> batch_views(views.data(), n);
      const auto t = std::chrono::steady_clock::now();
      const Status s = save ? mover->Save(batch_keys, batch_views) : mover->Load(batch_keys, batch_views);
      phase.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
      if (!s.ok()) {
        phase.failed += n;
        if (phase.first_error.ok()) phase.first_error = s;
      } else {
        check(start, n);
      }
    }
    return phase;
  };
  auto none = [](uint64_t, uint64_t) {};
  auto fill_for_verify = [&](uint64_t start, uint64_t n) {
    if (!o.verify) return;
    for (uint64_t b = 0; b < n; ++b) Fill(*buffers[b], o.seed, start + b);
  };
  // What a block takes on the storage (its header region included), as capacity counts it.
  const uint64_t stored_bytes = raw ? block_size : transfer->stored_block_bytes();
  const Phase save = run(true, fill_for_verify, none);
  Print("save", save, o.blocks, stored_bytes);

  uint64_t differ = 0;
  store::AlignedBuffer expected(block_size);
  auto clear_for_verify = [&](uint64_t, uint64_t n) {
    if (!o.verify) return;
    for (uint64_t b = 0; b < n; ++b) std::memset(buffers[b]->data(), 0, block_size);
  };
  auto compare = [&](uint64_t start, uint64_t n) {
    if (!o.verify) return;
    for (uint64_t b = 0; b < n; ++b) {
      Fill(expected, o.seed, start + b);
      differ += std::memcmp(expected.data(), buffers[b]->data(), block_size) != 0;
    }
  };
  const Phase load = run(false, clear_for_verify, compare);
  Print("load", load, o.blocks, stored_bytes);
  if (o.verify) {
    std::printf("verify: %llu of %llu blocks came back different\n", static_cast<unsigned long long>(differ),
                static_cast<unsigned long long>(o.blocks - load.failed));
  }
  for (const auto& [name, phase] : {std::pair<const char*, const Phase*>{"save", &save}, {"load", &load}}) {
    if (!phase->first_error.ok()) std::printf("first error (%s): %s\n", name, phase->first_error.ToString().c_str());
  }
  if (!o.keep) {
    std::vector<store::BlockId> ids;
    for (const std::string& key : keys) ids.push_back(*store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey(key)));
    if (Status s = posix.Remove(ids); !s.ok()) std::printf("cleanup: %s\n", s.ToString().c_str());
  }
  return (save.failed == 0 && load.failed == 0 && differ == 0) ? 0 : 1;
}

}  // namespace kvchaos::cli
