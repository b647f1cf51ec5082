// `kvchaos integrity verify`: a scrubber an operator can run. Reads a client config (the store
// keys plus a `meta` section: core/client/cache_client_config.h, example
// core/client/client.example.yaml), re-reads the blocks of the listed keys and verifies them
// against the checksums kept in meta. Prints one line per mismatched, missing or badly recorded
// key and a summary.
//
//   # client.yaml: the PosixStore keys (storage_backends, block_size, ...) plus
//   meta:
//     storage: nfs1                                 # global_unique_name in the registry
//     indexer: local:///var/lib/kvchaos/meta.json   # in-process: memory://, local:///FILE, redis://...
//     # nodes: ["127.0.0.1:6382"]                   # or the nodes of a cluster (leader discovery)
//     iov_size: 64KiB        # fallback IOV size; default: one IOV spanning the block
//
// Checksums bind how a block was cut into IOVs. Each block is read with the IOV layout stored
// with its checksum; `meta.iov_size` is assumed only for records written before layouts were
// stored. The summary says how many blocks were checked each way, and warns when mismatches are
// among blocks checked with the assumed layout (a wrong iov_size makes every such block mismatch).
//
// Reconciling: a key meta lists whose block the store no longer has whole (lost in a power loss
// without durable commits, left short) is printed as LOST and its index entry is dropped, so the
// index stops promising it (--keep-lost only reports it). I/O errors and mismatches drop nothing.
//
// Exit status: 0 all read blocks verified (or had no checksum), 1 mismatches, lost blocks or stored
// layouts that do not fit the block found, 2 bad input or an error that stopped the scrub.
//
// `kvchaos integrity rebuild`: the index rebuilt from the blocks (core/client/index_rebuild.h).
// On a storage with inline headers every block names its key, length, checksum and IOV layout, so
// after the index lost entries (its Redis wiped) the same client config rebuilds them: every
// backend path is scanned, each key without an entry gets one (REBUILT), an entry that agrees is
// left alone, one that disagrees is a CONFLICT (both sides printed, nothing changed); damaged
// (BADHEADER), torn (TORN), headerless (NOHEADER) and misplaced (MISPLACED) blocks are printed and
// never indexed. --dry-run writes nothing; --keys-from limits it to the listed keys (and names keys
// too long to be stored in their headers). Entries are written with StartWrite/FinishWrite, as a
// Save publishes a block, so the index's fence applies (meta.nodes: through the leader).
// Exit status: 0 every block found is indexed, 1 conflicts or blocks that could not be indexed,
// 2 bad input, a storage without inline headers, or an error that stopped the run.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "core/client/cache_client.h"
#include "core/client/index_rebuild.h"
#include "tools/kvchaos/block_cli.h"
#include "tools/kvchaos/cli_checks.h"
#include "tools/kvchaos/command_registry.h"

namespace kvchaos::cli {
namespace {

struct VerifyArgs {
  std::string config;
  std::string keys_from;
  size_t batch = 64;
  bool keep_lost = false;
};

int RunVerify(const VerifyArgs& args) {
  auto fail = [](const Status& s) {
    std::cerr << "kvchaos integrity verify: " << s.ToString() << "\n";
    return 2;
  };
  Result<client::CacheClientConfig> config = client::LoadCacheClientConfig(args.config);
  if (!config.ok()) return fail(config.status());
  Result<std::vector<std::string>> keys = ReadKeysFile(args.keys_from);
  if (!keys.ok()) return fail(keys.status());
  client::TransferClientOptions options;
  options.drop_lost_entries = !args.keep_lost;
  options.on_mismatch = [](const client::ChecksumMismatchEvent& e) { std::cout << MismatchLine(e) << "\n"; };
  Result<std::unique_ptr<client::CacheClient>> opened = client::CacheClient::Open(*config, std::move(options));
  if (!opened.ok()) return fail(opened.status());
  client::TransferClient* transfer = &(*opened)->transfer();
  std::vector<uint64_t> layout;
  if (config->iov_size != 0) layout.assign(config->store.block_size / config->iov_size, config->iov_size);
  Result<client::TransferClient::ScrubReport> report = transfer->Scrub(*keys, layout, args.batch);
  if (!report.ok()) return fail(report.status());
  for (const std::string& key : report->missing) {
    if (std::find(report->lost.begin(), report->lost.end(), key) != report->lost.end()) {
      std::cout << "LOST key=" << key << " location=" << meta::CacheManager::BlockIdHexForKey(key)
                << " (meta lists it, the store no longer has its block whole; "
                << (args.keep_lost ? "entry kept: --keep-lost" : "index entry dropped") << ")\n";
    } else {
      std::cout << "MISSING key=" << key << "\n";
    }
  }
  for (const std::string& key : report->misrouted) {
    std::cout << "MISROUTED key=" << key
              << " (meta's location for it holds a block whose inline header names another key)\n";
  }
  for (const std::string& key : report->corrupt_header) {
    std::cout << "BADHEADER key=" << key << " (its block's inline header is damaged)\n";
  }
  for (const std::string& key : report->bad_layout) {
    std::cout << "BADLAYOUT key=" << key << " (its stored IOV layout does not add up to the block size)\n";
  }
  std::cout << "checked " << report->blocks << " keys: " << report->verified << " verified, " << report->unverified
            << " without stored checksum, " << report->mismatched.size() << " mismatched, " << report->missing.size()
            << " missing (" << report->lost.size() << " of them lost from the store)\n";
  std::cout << "layouts: " << report->with_stored_layout << " blocks checked with their stored IOV layout, "
            << report->with_assumed_layout << " with an assumed one ("
            << (config->iov_size != 0 ? "meta.iov_size " + std::to_string(config->iov_size) + " bytes"
                                      : std::string("one IOV per block"))
            << ")\n";
  if (report->mismatched_with_assumed_layout > 0) {
    std::cout << "note: " << report->mismatched_with_assumed_layout
              << " mismatches are of blocks without a stored layout; if meta.iov_size is not the writer's IOV "
                 "size they are false alarms\n";
  }
  return report->mismatched.empty() && report->bad_layout.empty() && report->lost.empty() &&
                 report->misrouted.empty() && report->corrupt_header.empty()
             ? 0
             : 1;
}

struct RebuildArgs {
  std::string config;
  std::string keys_from;
  size_t batch = 512;
  bool dry_run = false;
};

int RunRebuild(const RebuildArgs& args) {
  auto fail = [](const Status& s) {
    std::cerr << "kvchaos integrity rebuild: " << s.ToString() << "\n";
    return 2;
  };
  Result<client::CacheClientConfig> config = client::LoadCacheClientConfig(args.config);
  if (!config.ok()) return fail(config.status());
  client::IndexRebuildOptions options;
  if (!args.keys_from.empty()) {
    Result<std::vector<std::string>> keys = ReadKeysFile(args.keys_from);
    if (!keys.ok()) return fail(keys.status());
    options.keys = std::move(*keys);
  }
  Result<std::unique_ptr<client::CacheClient>> opened = client::CacheClient::Open(*config);
  if (!opened.ok()) {
    Status s = opened.status();
    if (s.code() == StatusCode::kNotFound) {
      s = s.WithContext("the storage must be registered (with its inline header settings) before its index is rebuilt");
    }
    return fail(s);
  }
  const store::PosixStoreConfig& store = (*opened)->posix_store().config();  // normalised paths
  options.storage = config->storage;
  options.backends = store.storage_backends;
  options.block_size = store.block_size;
  options.shard_width = store.data_dir_shard_bytes;
  options.dry_run = args.dry_run;
  options.batch = args.batch;
  options.on_finding = [](const client::RebuildFinding& f) { std::cout << client::FindingLine(f) << "\n"; };
  Result<client::IndexRebuildReport> report = client::RebuildIndex((*opened)->meta(), options);
  if (!report.ok()) return fail(report.status());
  std::cout << report->Summary() << "\n";
  if (report->skipped > 0) {
    std::cout << "skipped: " << report->bad_header << " bad header, " << report->torn << " torn, " << report->no_header
              << " without header, " << report->misplaced << " misplaced, " << report->key_unknown
              << " key unknown, " << report->algo_mismatch << " other checksum algorithm, " << report->io_errors
              << " unreadable\n";
  }
  std::cout << "left alone: " << report->not_listed << " blocks of keys not listed, " << report->ignored_files
            << " temp or other files, " << report->copies << " further copies on other paths, " << report->vanished
            << " files gone before they were read";
  if (options.keys) std::cout << "; " << report->missing << " listed keys without a block";
  std::cout << "\n";
  return report->clean() ? 0 : 1;
}

const bool registered = RegisterCommand(
    {"integrity", "Data integrity tools: verify stored blocks against their checksums, rebuild the index",
     [](CLI::App& app) {
       CLI::App* integrity = app.add_subcommand("integrity", "Data integrity tools");
       integrity->require_subcommand(1);
       auto args = std::make_shared<VerifyArgs>();
       CLI::App* verify = integrity->add_subcommand(
           "verify", "Re-read the blocks of the listed keys and compare them with the checksums in meta");
       verify->add_option("--config", args->config, "client YAML: store keys plus meta.storage and meta.indexer or meta.nodes")
           ->required()
           ->check(CLI::ExistingFile);
       verify->add_option("--keys-from", args->keys_from, "file with one key per line ('#' comments)")
           ->required()
           ->check(CLI::ExistingFile);
       verify->add_option("--batch", args->batch, "blocks per read batch (default 64)")->check(IntegerIn(1, 65536));
       verify->add_flag("--keep-lost", args->keep_lost,
                        "report keys whose blocks the store lost, but keep their index entries");
       verify->callback([args] {
         const int code = RunVerify(*args);
         if (code != 0) throw CLI::RuntimeError(code);
       });

       auto rebuild_args = std::make_shared<RebuildArgs>();
       CLI::App* rebuild = integrity->add_subcommand(
           "rebuild", "Rebuild lost index entries from the inline headers of the storage's blocks");
       rebuild->add_option("--config", rebuild_args->config, "client YAML: store keys plus meta.storage and meta.indexer or meta.nodes")
           ->required()
           ->check(CLI::ExistingFile);
       rebuild->add_option("--keys-from", rebuild_args->keys_from,
                           "only these keys, one per line ('#' comments); also names keys too long for their header")
           ->check(CLI::ExistingFile);
       rebuild->add_option("--batch", rebuild_args->batch, "keys per meta call (default 512)")->check(IntegerIn(1, 16384));
       rebuild->add_flag("--dry-run", rebuild_args->dry_run, "report what would be rebuilt, write nothing");
       rebuild->callback([rebuild_args] {
         const int code = RunRebuild(*rebuild_args);
         if (code != 0) throw CLI::RuntimeError(code);
       });
     }});

}  // namespace
}  // namespace kvchaos::cli
