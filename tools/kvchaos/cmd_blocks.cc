// `kvchaos blocks`: save and load KV-cache blocks with end-to-end checksums, through the same
// CacheClient an embedding service uses (core/client/cache_client.h), from a client config (the
// store keys plus a `meta` section: core/client/client.example.yaml).
//
//   kvchaos blocks save --config client.yaml (--keys-from FILE | --key KEY...) [--data-dir DIR] [--seed N]
//       Saves one block per key: the bytes of DIR/KEY (exactly block_size bytes), or without
//       --data-dir bytes generated from the seed and the key. Prints, per key, where the block's
//       file is and the checksum meta keeps for it; a key already cached is not written again.
//   kvchaos blocks load --config client.yaml (--keys-from FILE | --key KEY...) [--out-dir DIR]
//       Loads each key's block and verifies it against its checksum in meta; prints OK, MISMATCH
//       (the block's bytes are not what was saved: discarded, never written to --out-dir),
//       MISSING or LOST per key, and writes the good blocks to DIR/KEY.
//
// Keys go to the store in batches of 64. Exit status: 0 every key saved / loaded and verified,
// 1 a mismatch, a missing or lost block, or a failed save, 2 bad input or an error that stopped
// the command (config, store, meta unreachable).
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/client/cache_client.h"
#include "core/common/rng.h"
#include "tools/kvchaos/block_cli.h"
#include "tools/kvchaos/command_registry.h"

namespace kvchaos::cli {
namespace {

constexpr size_t kBatch = 64;

struct BlocksArgs {
  std::string config;
  std::string keys_from;
  std::vector<std::string> keys;
  std::string dir;  // --data-dir (save) or --out-dir (load)
  uint64_t seed = 1;
};

[[noreturn]] void Fail(const std::string& what, const Status& s) {
  std::cerr << "kvchaos blocks " << what << ": " << s.ToString() << "\n";
  throw CLI::RuntimeError(2);
}

std::vector<std::string> Keys(const std::string& what, const BlocksArgs& args) {
  std::vector<std::string> keys = args.keys;
  if (!args.keys_from.empty()) {
    Result<std::vector<std::string>> from = ReadKeysFile(args.keys_from);
    if (!from.ok()) Fail(what, from.status());
    keys.insert(keys.end(), from->begin(), from->end());
  }
  if (keys.empty()) Fail(what, Status::InvalidArgument("no keys: give --key KEY or --keys-from FILE"));
  if (!args.dir.empty()) {
    // Keys name files under the directory: no way out of it.
    for (const std::string& key : keys) {
      if (key.empty() || key == "." || key == ".." || key.find('/') != std::string::npos) {
        Fail(what, Status::InvalidArgument("key '" + key + "' cannot name a file under '" + args.dir + "'"));
      }
    }
  }
  return keys;
}

std::unique_ptr<client::CacheClient> OpenClient(const std::string& what, const std::string& config,
                                                client::TransferClientOptions options = {}) {
  Result<std::unique_ptr<client::CacheClient>> opened = client::CacheClient::Open(config, std::move(options));
  if (!opened.ok()) Fail(what, opened.status());
  return std::move(*opened);
}

// The block of `key`: DIR/KEY, or bytes from the seed and the key.
Status FillBlock(const BlocksArgs& args, const std::string& key, std::vector<std::byte>& out) {
  if (args.dir.empty()) {
    Rng rng = Rng(args.seed).Split("kvchaos blocks").Split(key);
    for (size_t i = 0; i < out.size(); i += 8) {
      const uint64_t word = rng.NextU64();
      std::memcpy(out.data() + i, &word, std::min<size_t>(8, out.size() - i));
    }
    return Status::Ok();
  }
  const std::string path = args.dir + "/" + key;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return Status::IoError("cannot read '" + path + "': " + ec.message(), ec.value());
  if (size != out.size()) {
    return Status::InvalidArgument("'" + path + "' holds " + std::to_string(size) + " bytes; a block is " +
                                   std::to_string(out.size()) + " (the store's block_size)");
  }
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
  if (!in) return Status::IoError("cannot read '" + path + "'", errno);
  return Status::Ok();
}

void Save(const BlocksArgs& args) {
  const std::vector<std::string> keys = Keys("save", args);
  std::unique_ptr<client::CacheClient> client = OpenClient("save", args.config);
  const uint64_t block_size = client->block_size();
  size_t written = 0, cached = 0;
  for (size_t start = 0; start < keys.size(); start += kBatch) {
    const std::vector<std::string> batch(keys.begin() + static_cast<std::ptrdiff_t>(start),
                                         keys.begin() + static_cast<std::ptrdiff_t>(std::min(keys.size(), start + kBatch)));
    std::vector<std::vector<std::byte>> bytes(batch.size(), std::vector<std::byte>(block_size));
    std::vector<client::BlockBuffers> blocks;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (Status s = FillBlock(args, batch[i], bytes[i]); !s.ok()) Fail("save", s);
      blocks.push_back({std::span<std::byte>(bytes[i])});
    }
    Result<client::SaveResult> saved = client->Save(batch, blocks);
    if (!saved.ok()) {
      std::cerr << "kvchaos blocks save: " << saved.status().ToString() << "\n";
      throw CLI::RuntimeError(1);
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (saved->written[i] == 0) {
        ++cached;
        std::cout << "CACHED key=" << batch[i] << " (already cached: not written again)\n";
        continue;
      }
      ++written;
      std::cout << "SAVED key=" << batch[i] << " location=" << meta::CacheManager::BlockIdHexForKey(batch[i]);
      if (!saved->checksums.empty()) std::cout << " checksum=" << saved->checksums[i];
      std::cout << " file=" << BlockFileOf(client->posix_store(), batch[i]) << "\n";
    }
  }
  const meta::StorageConfig& storage = client->transfer().storage_config();
  std::cout << "saved " << written << " of " << keys.size() << " keys (" << cached << " already cached) to storage '"
            << storage.global_unique_name << "', "
            << (storage.integrity.enable_meta_checksum
                    ? "checksums " + std::string(integrity::ChecksumAlgoName(storage.integrity.algo))
                    : std::string("no checksums (the storage has meta checksums off)"))
            << "\n";
}

void Load(const BlocksArgs& args) {
  const std::vector<std::string> keys = Keys("load", args);
  if (!args.dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.dir, ec);
    if (ec) Fail("load", Status::IoError("--out-dir '" + args.dir + "': " + ec.message(), ec.value()));
  }
  client::TransferClientOptions options;
  options.on_mismatch = [](const client::ChecksumMismatchEvent& e) { std::cout << MismatchLine(e) << "\n"; };
  std::unique_ptr<client::CacheClient> client = OpenClient("load", args.config, std::move(options));
  const uint64_t block_size = client->block_size();
  size_t verified = 0, unverified = 0, mismatched = 0, missing = 0, lost = 0;
  for (size_t start = 0; start < keys.size(); start += kBatch) {
    const std::vector<std::string> batch(keys.begin() + static_cast<std::ptrdiff_t>(start),
                                         keys.begin() + static_cast<std::ptrdiff_t>(std::min(keys.size(), start + kBatch)));
    std::vector<std::vector<std::byte>> bytes(batch.size(), std::vector<std::byte>(block_size));
    std::vector<client::BlockBuffers> blocks;
    for (auto& b : bytes) blocks.push_back({std::span<std::byte>(b)});
    const client::LoadResult r = client->Load(batch, blocks);
    const bool other_error = !r.status.ok() && r.faulty.empty() && r.missing.empty();
    if (other_error) {
      std::cerr << "kvchaos blocks load: " << r.status.ToString() << "\n";
      throw CLI::RuntimeError(2);
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      auto in = [i](const std::vector<size_t>& list) { return std::find(list.begin(), list.end(), i) != list.end(); };
      if (in(r.faulty)) {
        ++mismatched;  // its MISMATCH line came from the callback
      } else if (in(r.lost)) {
        ++missing, ++lost;
        std::cout << "LOST key=" << batch[i] << " (meta listed it, the store no longer has its block whole; index entry dropped)\n";
      } else if (in(r.missing)) {
        ++missing;
        std::cout << "MISSING key=" << batch[i] << "\n";
      } else if (!r.status.ok() && r.status.code() != StatusCode::kChecksumMismatch &&
                 r.status.code() != StatusCode::kNotFound) {
        // A batch that failed for another reason than its faulty or missing blocks read nothing.
        std::cout << "NOT READ key=" << batch[i] << ": " << r.status.ToString() << "\n";
        ++missing;
      } else {
        r.verified[i] ? ++verified : ++unverified;
        std::cout << "OK key=" << batch[i] << (r.verified[i] ? " (checksum verified)" : " (meta holds no checksum)");
        if (!args.dir.empty()) {
          const std::string path = args.dir + "/" + batch[i];
          std::ofstream out(path, std::ios::binary | std::ios::trunc);
          out.write(reinterpret_cast<const char*>(bytes[i].data()), static_cast<std::streamsize>(bytes[i].size()));
          if (!out) Fail("load", Status::IoError("cannot write '" + path + "'", errno));
          std::cout << " -> " << path;
        }
        std::cout << "\n";
      }
    }
  }
  std::cout << "loaded " << keys.size() << " keys: " << verified << " verified, " << unverified
            << " without stored checksum, " << mismatched << " mismatched, " << missing << " missing (" << lost
            << " of them lost from the store)\n";
  if (mismatched + missing > 0) throw CLI::RuntimeError(1);
}

void AddCommonOptions(CLI::App* cmd, BlocksArgs& args) {
  cmd->add_option("--config", args.config, "client YAML: store keys plus meta (core/client/client.example.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--key", args.keys, "a key (repeat for several)");
  cmd->add_option("--keys-from", args.keys_from, "file with one key per line ('#' comments)")->check(CLI::ExistingFile);
}

const bool registered = RegisterCommand(
    {"blocks", "Save and load blocks with end-to-end checksums (through TransferClient)", [](CLI::App& parent) {
       auto* cmd = parent.add_subcommand("blocks", "Save and load blocks with end-to-end checksums (through TransferClient)");
       cmd->require_subcommand(1);
       auto save_args = std::make_shared<BlocksArgs>();
       auto* save = cmd->add_subcommand("save", "Save one block per key; print its file and checksum");
       AddCommonOptions(save, *save_args);
       save->add_option("--data-dir", save_args->dir, "read each key's block from DIR/KEY (block_size bytes)");
       save->add_option("--seed", save_args->seed, "without --data-dir: seed of the generated bytes (default 1)");
       save->callback([save_args] { Save(*save_args); });
       auto load_args = std::make_shared<BlocksArgs>();
       auto* load = cmd->add_subcommand("load", "Load each key's block and verify it against its checksum in meta");
       AddCommonOptions(load, *load_args);
       load->add_option("--out-dir", load_args->dir, "write each verified block to DIR/KEY");
       load->callback([load_args] { Load(*load_args); });
     }});

}  // namespace
}  // namespace kvchaos::cli
