// `kvchaos store`: operator tools for the PosixStore.
//
//   kvchaos store check --config store.yaml
//       Runs Setup (the startup probe on every backend) and prints, as JSON, each backend's state
//       and the effective configuration: every key with the value the store runs with
//       ("config"), and the keys the file left at their defaults ("defaults"). On failure "errors"
//       lists every problem, one per entry in line order (also printed to stderr, one per line).
//       Exit 0 when the store came up, 1 otherwise.
//   kvchaos store bench --config store.yaml --block-size 4MiB --blocks N --engine aio --qd 16 [--tasks T] [--verify]
//                       [--keep] [--load-only]
//       Dumps then loads N blocks of one shard each, with the engine's concurrency (the I/O queue
//       depth, as fio's iodepth) set to `qd` and T single-block tasks in flight (default 4 × qd: a
//       server hands the store whole requests, so the engine sees blocks well ahead of the queue
//       and creates their files meanwhile), and prints GB/s
//       (10^9 bytes/s) per phase. --verify fills every block with seeded data and checks every byte
//       loaded, printing how many blocks came back different. With aio, each phase also prints how
//       full the engine kept the kernel queue (mean depth while busy; share of the time a slot was
//       free while work waited — being prepared, or prepared and not yet submitted). Prints each
//       backend's health transitions seen during the run. Removes its blocks afterwards unless --keep.
//       The config's durable_commit applies (the header says which). --load-only skips the dump and
//       reads the blocks an earlier --verify --keep run with the same --seed left (after a power
//       loss, say): the load line counts the missing ones, --verify the intact ones.
//   kvchaos store bench --config store.yaml --integrity raw|off|crc32_xor_int64|crc64_full
//                       [--batch B] [--iovs N] [--checksum-threads T] [--inline-header] [--verify] [--keep]
//       Saves then loads the N blocks through TransferClient (in-process meta) in calls of B blocks
//       of N IOVs each, with that integrity setting, or the same batches straight on the store
//       (raw); prints save and load GB/s (transfer_bench.h). bench/transfer_bench.sh compares them.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "core/common/json_text.h"
#include "core/common/rng.h"
#include "core/common/units.h"
#include "core/common/utf8.h"
#include "core/store/aligned_buffer.h"
#include "core/store/posix_store.h"
#include "core/store/store_config.h"
#include "tools/kvchaos/cli_checks.h"
#include "tools/kvchaos/command_registry.h"
#include "tools/kvchaos/transfer_bench.h"

namespace kvchaos::cli {
namespace {

using store::AlignedBuffer;
using store::BlockId;

// A status as lines for JSON and the terminal: one per problem (a config error lists every one),
// without the code's name (given apart), errno text kept.
std::vector<std::string> ErrorLines(const Status& s) {
  std::string text = s.ToString();
  const std::string prefix = StatusCodeName(s.code()) + ": ";
  if (text.starts_with(prefix)) text.erase(0, prefix.size());
  std::vector<std::string> lines;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Keys of StoreConfigToJson (store_health.* flattened) that `given` does not set.
std::vector<std::string> DefaultedKeys(const nlohmann::json& config, const std::vector<std::string>& given) {
  std::vector<std::string> defaulted;
  for (const auto& [key, value] : config.items()) {
    if (value.is_object()) {
      for (const auto& [inner, unused] : value.items()) {
        const std::string name = key + "." + inner;
        if (std::find(given.begin(), given.end(), name) == given.end()) defaulted.push_back(name);
      }
    } else if (std::find(given.begin(), given.end(), key) == given.end()) {
      defaulted.push_back(key);
    }
  }
  return defaulted;
}

int RunCheck(const std::string& config_path) {
  nlohmann::json out;
  auto failed = [&out](const Status& s) {
    out["ok"] = false;
    out["code"] = StatusCodeName(s.code());
    out["errors"] = ErrorLines(s);
    // The terminal gets valid UTF-8 too (a path may hold any bytes; the JSON replaces them likewise).
    for (const std::string& line : ErrorLines(s)) std::cerr << "kvchaos store check: " << EscapeInvalidUtf8(line) << "\n";
  };
  std::vector<std::string> given;
  Result<store::PosixStoreConfig> cfg = store::LoadStoreConfig(config_path, &given);
  if (!cfg.ok()) {
    failed(cfg.status());
    std::cout << DumpJson(out, 2) << "\n";
    return 1;
  }
  store::PosixStore posix;
  Status s = posix.Setup(*cfg);
  out["ok"] = s.ok();
  out["engine"] = cfg->io_engine == store::IoEngineKind::kAio ? "aio" : "psync";
  out["io_direct"] = cfg->io_direct;
  out["attempt_timeout_ms"] = ToMillis(store::PosixStore::AttemptTimeout(cfg->timeout_ms, cfg->storage_backends.size()));
  // What the store runs with: every key, and which of them the file left at the default.
  out["config"] = store::StoreConfigToJson(*cfg);
  out["defaults"] = DefaultedKeys(out["config"], given);
  if (!s.ok()) {
    failed(s);
    nlohmann::json backends = nlohmann::json::array();
    for (const std::string& p : cfg->storage_backends) backends.push_back({{"path", p}});
    out["backends"] = backends;
    std::cout << DumpJson(out, 2) << "\n";
    return 1;
  }
  nlohmann::json backends = nlohmann::json::array();
  for (const store::BackendStatus& b : posix.BackendStates()) {
    backends.push_back({{"path", b.path},
                        {"state", b.available ? "available" : "unavailable"},
                        {"window_results", b.window_count},
                        {"window_failures", b.window_failures}});
  }
  out["backends"] = backends;
  out["healthy"] = posix.CheckHealth().ok();
  std::cout << DumpJson(out, 2) << "\n";
  return 0;
}

struct BenchArgs {
  std::string config;
  std::string block_size = "4MiB";
  uint64_t blocks = 256;
  std::string engine;
  int qd = 16;
  int tasks = 0;  // 0: 4 × qd
  bool verify = false;
  bool keep = false;
  bool load_only = false;
  uint64_t seed = 1;
  TransferBenchOptions transfer;  // used when transfer.integrity is set
};

void FillBlock(AlignedBuffer& buf, uint64_t seed, uint64_t block) {
  Rng rng = Rng(seed).Split(block);
  auto* words = reinterpret_cast<uint64_t*>(buf.data());
  for (size_t i = 0; i < buf.size() / 8; ++i) words[i] = rng.NextU64();
}

struct PhaseResult {
  double seconds = 0;
  uint64_t failed = 0;
  uint64_t missing = 0;  // of `failed`: NotFound
  Status first_error;
};

// Runs one phase: `blocks` single-shard tasks with at most one per buffer in flight. `before(i, buf)` prepares
// a buffer before submission, `after(i, buf)` inspects it after a successful Wait.
template <typename Before, typename After>
PhaseResult RunPhase(store::PosixStore& posix, bool dump, const std::vector<BlockId>& ids,
                     std::vector<std::unique_ptr<AlignedBuffer>>& buffers, Before before, After after) {
  PhaseResult result;
  std::deque<std::pair<uint64_t, store::TaskHandle>> in_flight;  // block index, handle
  std::vector<size_t> free_slots;
  for (size_t i = 0; i < buffers.size(); ++i) free_slots.push_back(i);
  std::vector<size_t> slot_of(ids.size());
  auto retire_oldest = [&] {
    auto [index, handle] = in_flight.front();
    in_flight.pop_front();
    Status s = posix.Wait(handle);
    if (!s.ok()) {
      ++result.failed;
      if (s.code() == StatusCode::kNotFound) ++result.missing;
      if (result.first_error.ok()) result.first_error = s;
    } else {
      after(index, *buffers[slot_of[index]]);
    }
    free_slots.push_back(slot_of[index]);
  };
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < ids.size(); ++i) {
    if (free_slots.empty()) retire_oldest();
    const size_t slot = free_slots.back();
    free_slots.pop_back();
    slot_of[i] = slot;
    before(i, *buffers[slot]);
    store::TransferTask task{{store::Shard{ids[i], 0, {buffers[slot]->span()}}}};
    Result<store::TaskHandle> h = dump ? posix.Dump(std::move(task)) : posix.Load(std::move(task));
    if (!h.ok()) {
      ++result.failed;
      if (result.first_error.ok()) result.first_error = h.status();
      free_slots.push_back(slot);
      continue;
    }
    in_flight.emplace_back(i, *h);
  }
  while (!in_flight.empty()) retire_oldest();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

// "dump: 1.234 GB/s (0.512 s, 0 failed)": the throughput of the blocks that made it; none when
// every block failed (a rate of failures is not a throughput).
void PrintPhase(const char* phase, const PhaseResult& r, uint64_t blocks, uint64_t block_size) {
  const std::string missing = std::string(phase) == "load" ? ", " + std::to_string(r.missing) + " of them missing" : "";
  if (r.failed >= blocks) {
    std::printf("%s: every block failed (%llu of %llu in %.3f s%s): no throughput\n", phase,
                static_cast<unsigned long long>(r.failed), static_cast<unsigned long long>(blocks), r.seconds,
                missing.c_str());
    return;
  }
  const double bytes = static_cast<double>(block_size) * static_cast<double>(blocks - r.failed);
  std::printf("%s: %.3f GB/s (%.3f s, %llu failed%s%s)\n", phase, bytes / r.seconds / 1e9, r.seconds,
              static_cast<unsigned long long>(r.failed), missing.c_str(),
              r.failed > 0 ? ("; GB/s of the " + std::to_string(blocks - r.failed) + " that succeeded").c_str() : "");
}

int RunBench(const BenchArgs& args) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // into a pipe too, each line as soon as it is printed
  Result<store::PosixStoreConfig> loaded = store::LoadStoreConfig(args.config);
  if (!loaded.ok()) {
    std::cerr << "kvchaos store bench: " << loaded.status().ToString() << "\n";
    return 2;
  }
  store::PosixStoreConfig cfg = *loaded;
  Result<uint64_t> block_size = ParseByteSize(args.block_size);
  if (!block_size.ok() || *block_size == 0) {
    std::cerr << "kvchaos store bench: --block-size: " << (block_size.ok() ? "must be > 0" : block_size.status().ToString()) << "\n";
    return 2;
  }
  cfg.block_size = cfg.shard_size = cfg.tensor_size = *block_size;
  if (!args.engine.empty()) {
    if (args.engine == "aio") cfg.io_engine = store::IoEngineKind::kAio;
    else if (args.engine == "psync") cfg.io_engine = store::IoEngineKind::kPsync;
    else {
      std::cerr << "kvchaos store bench: --engine: must be aio or psync, got '" << args.engine << "'\n";
      return 2;
    }
  }
  cfg.concurrency = args.qd;
  if (Status s = cfg.NormalizeAndValidate(); !s.ok()) {
    std::cerr << "kvchaos store bench: " << s.ToString() << "\n";
    return 2;
  }
  const bool transfer = !args.transfer.integrity.empty();
  if (transfer) {
    Status s = args.load_only ? Status::InvalidArgument("--load-only: not with --integrity (it saves its own blocks)")
                              : CheckTransferBenchOptions(args.transfer, *block_size);
    if (!s.ok()) {
      std::cerr << "kvchaos store bench: " << s.message() << "\n";
      return 2;
    }
  }
  store::PosixStore posix;
  if (Status s = posix.Setup(cfg); !s.ok()) {
    std::cerr << "kvchaos store bench: " << s.ToString() << "\n";
    return 1;
  }
  if (transfer) {
    TransferBenchOptions options = args.transfer;
    options.blocks = args.blocks;
    options.seed = args.seed;
    options.verify = args.verify;
    options.keep = args.keep;
    return RunTransferBench(posix, options);
  }
  const auto t0 = std::chrono::steady_clock::now();

  std::vector<BlockId> ids(args.blocks);
  Rng id_rng = Rng(args.seed).Split("block-ids");
  for (BlockId& id : ids) {
    const uint64_t a = id_rng.NextU64(), b = id_rng.NextU64();
    std::memcpy(id.bytes.data(), &a, 8);
    std::memcpy(id.bytes.data() + 8, &b, 8);
  }
  std::vector<std::unique_ptr<AlignedBuffer>> buffers;
  const int tasks = args.tasks > 0 ? args.tasks : 4 * args.qd;
  for (int i = 0; i < tasks; ++i) {
    buffers.push_back(std::make_unique<AlignedBuffer>(*block_size));
    FillBlock(*buffers.back(), args.seed, 1000000 + i);
  }
  const char* engine = cfg.io_engine == store::IoEngineKind::kAio ? "aio" : "psync";
  std::cout << "store bench: " << args.blocks << " blocks x " << FormatBytes(*block_size) << ", engine " << engine
            << ", io_direct " << (cfg.io_direct ? "on" : "off") << ", durable_commit " << (cfg.durable_commit ? "on" : "off")
            << ", qd " << args.qd << ", " << tasks << " tasks in flight, " << cfg.storage_backends.size()
            << " backend(s)\n";

  // How full the engine kept the kernel queue during a phase (aio only).
  auto queue_line = [&](const std::optional<store::AioQueueStats>& before) {
    const std::optional<store::AioQueueStats> after = posix.aio_queue_stats();
    if (!before || !after) return;
    const double busy = after->busy_s - before->busy_s;
    const double depth = busy > 0 ? (after->depth_s - before->depth_s) / busy : 0;
    const double starved = busy > 0 ? (after->starved_s - before->starved_s) / busy : 0;
    const double starved_ready = busy > 0 ? (after->starved_ready_s - before->starved_ready_s) / busy : 0;
    const uint64_t submits = after->submits - before->submits;
    std::printf("  queue: mean depth %.2f of %d; below it with work waiting %.1f%% of the time (%.1f%% with a prepared "
                "attempt waiting); %.2f I/Os per io_submit\n",
                depth, args.qd, 100 * starved, 100 * starved_ready,
                submits > 0 ? static_cast<double>(after->submitted - before->submitted) / static_cast<double>(submits) : 0.0);
  };
  std::optional<store::AioQueueStats> before = posix.aio_queue_stats();
  PhaseResult dump;
  if (!args.load_only) {
    dump = RunPhase(
        posix, true, ids, buffers,
        [&](uint64_t i, AlignedBuffer& buf) {
          if (args.verify) FillBlock(buf, args.seed, i);
        },
        [](uint64_t, AlignedBuffer&) {});
    PrintPhase("dump", dump, args.blocks, *block_size);
    queue_line(before);
    before = posix.aio_queue_stats();
    if (store::DirectorySyncer* syncer = posix.dir_syncer()) {
      // Shard directories are 4096 per backend: random block ids rarely share one within a round.
      std::printf("  durable commits: %llu directory fsyncs (shard and backend directories) in %llu rounds for %llu "
                  "blocks\n",
                  static_cast<unsigned long long>(syncer->directory_syncs()),
                  static_cast<unsigned long long>(syncer->rounds()), static_cast<unsigned long long>(args.blocks));
    }
  }

  uint64_t differ = 0;
  AlignedBuffer expected(args.verify ? *block_size : 1);
  PhaseResult load = RunPhase(
      posix, false, ids, buffers,
      [&](uint64_t, AlignedBuffer& buf) {
        if (args.verify) std::memset(buf.data(), 0, buf.size());
      },
      [&](uint64_t i, AlignedBuffer& buf) {
        if (!args.verify) return;
        FillBlock(expected, args.seed, i);
        if (std::memcmp(expected.data(), buf.data(), buf.size()) != 0) ++differ;
      });
  PrintPhase("load", load, args.blocks, *block_size);
  queue_line(before);
  if (args.verify) {
    std::printf("verify: %llu of %llu blocks came back different; %llu of %llu intact\n",
                static_cast<unsigned long long>(differ), static_cast<unsigned long long>(args.blocks - load.failed),
                static_cast<unsigned long long>(args.blocks - load.failed - differ),
                static_cast<unsigned long long>(args.blocks));
  }
  for (const auto& [name, phase] : {std::pair<const char*, const PhaseResult*>{"dump", &dump}, {"load", &load}}) {
    if (!phase->first_error.ok()) std::printf("first error (%s): %s\n", name, phase->first_error.ToString().c_str());
  }
  const auto transitions = posix.Transitions();
  if (transitions.empty()) {
    std::printf("health transitions: none\n");
  } else {
    std::printf("health transitions:\n");
    for (const auto& t : transitions) {
      const double at_s = std::chrono::duration<double>(t.at.time_since_epoch()).count() -
                          std::chrono::duration<double>(t0.time_since_epoch()).count();
      std::printf("  +%.3fs %s -> %s\n", at_s, t.path.c_str(), t.available ? "available" : "unavailable");
    }
  }
  if (!args.keep) {
    if (Status s = posix.Remove(ids); !s.ok()) std::printf("cleanup: %s\n", s.ToString().c_str());
  }
  return (dump.failed == 0 && load.failed == 0 && differ == 0) ? 0 : 1;
}

const bool registered = RegisterCommand(
    {"store", "PosixStore tools: check a config's backends, benchmark dump/load", [](CLI::App& app) {
       CLI::App* cmd = app.add_subcommand("store", "PosixStore tools: check a config's backends, benchmark dump/load");
       cmd->require_subcommand(1);

       auto config = std::make_shared<std::string>();
       CLI::App* check = cmd->add_subcommand("check", "Run the startup check and print each backend's state as JSON");
       check->add_option("--config", *config, "store YAML file")->required();
       check->callback([config] {
         if (int rc = RunCheck(*config); rc != 0) throw CLI::RuntimeError(rc);
       });

       auto args = std::make_shared<BenchArgs>();
       CLI::App* bench = cmd->add_subcommand("bench", "Dump then load N blocks and print GB/s per phase");
       bench->add_option("--config", args->config, "store YAML file")->required();
       bench->add_option("--block-size", args->block_size, "block size (one shard, one buffer)")->capture_default_str();
       bench->add_option("--blocks", args->blocks, "number of blocks")->capture_default_str()->check(IntegerIn(1));
       bench->add_option("--engine", args->engine, "aio or psync (default: the config's)");
       bench->add_option("--qd", args->qd, "engine concurrency: attempts in flight (the I/O queue depth)")
           ->capture_default_str()
           ->check(IntegerIn(1, 1024));
       bench->add_option("--tasks", args->tasks, "single-block tasks in flight (default 4 x qd)")->check(IntegerIn(1, 4096));
       bench->add_flag("--verify", args->verify, "fill blocks with seeded data and check every byte loaded");
       bench->add_option("--seed", args->seed, "seed of block ids and contents")->capture_default_str();
       bench->add_flag("--keep", args->keep, "keep the blocks afterwards");
       bench->add_flag("--load-only", args->load_only,
                       "no dump: load (and with --verify check) the blocks a --verify --keep run with the same --seed left");
       bench->add_option("--integrity", args->transfer.integrity,
                         "through TransferClient with raw|off|crc32_xor_int64|crc64_full (raw: the same batches "
                         "straight on the store) instead of single-block store tasks");
       bench->add_option("--batch", args->transfer.batch, "with --integrity: blocks per Save/Load call")
           ->capture_default_str();
       bench->add_option("--iovs", args->transfer.iovs, "with --integrity: equal IOVs per block")->capture_default_str();
       bench->add_flag("--inline-header", args->transfer.inline_header,
                       "with --integrity (not raw): the storage writes and checks inline block headers "
                       "(docs/inline-header.md); GB/s count their 4096 bytes per block");
       bench->add_option("--checksum-threads", args->transfer.checksum_threads,
                         "with --integrity: TransferClient's checksum threads, the caller's included (default: the "
                         "store's concurrency, at most the cores)")
           ->check(IntegerIn(1, 256));
       bench->callback([args] {
         if (int rc = RunBench(*args); rc != 0) throw CLI::RuntimeError(rc);
       });
     }});

}  // namespace
}  // namespace kvchaos::cli
