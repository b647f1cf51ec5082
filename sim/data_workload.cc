// The data-plane workload of a run (see the header).
#include "sim/data_workload.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace kvchaos::sim {
namespace {

constexpr size_t kMaxExamples = 5;

}  // namespace

std::string DataWorkloadKey(int64_t key, int64_t version) {
  return "k" + std::to_string(key) + ".v" + std::to_string(version);
}

meta::StorageConfig DataWorkloadStorage(const std::string& name, bool inline_header) {
  meta::StorageConfig storage;
  storage.type = "posix";
  storage.global_unique_name = name;
  storage.integrity.enable_meta_checksum = true;
  storage.integrity.algo = integrity::ChecksumAlgo::kCrc64Full;
  if (inline_header) {
    storage.integrity.enable_inline_header = true;
    storage.integrity.inline_header_version = integrity::DataIntegrityConfig::kLatestInlineHeaderVersion;
  }
  return storage;
}

store::PosixStoreConfig DataWorkloadStoreConfig(std::vector<std::string> backends, uint64_t block_size,
                                                store::IoEngineKind engine, bool durable_commit) {
  store::PosixStoreConfig config;
  config.io_engine = engine;
  config.io_direct = engine == store::IoEngineKind::kAio;
  config.block_size = block_size;
  config.shard_size = block_size;
  config.tensor_size = block_size;
  config.concurrency = 4;
  config.durable_commit = durable_commit;
  // 4096 mkdirs per path at every start would dominate a short run (in faultfs, a FUSE round trip
  // each): the engines make a block's shard directory when they first need it.
  config.shard_dirs_at_setup = false;
  config.timeout_ms = 2000 * static_cast<int64_t>(backends.size());
  config.storage_backends = std::move(backends);
  config.health.health_check_interval_s = 1;
  config.health.health_check_timeout_s = 0.5;
  config.health.health_window_size = 4;
  config.health.failure_threshold = 2;
  return config;
}

DataWorkload::DataWorkload(Runtime& runtime, client::TransferClient& transfer, DataWorkloadOptions options)
    : runtime_(runtime),
      transfer_(transfer),
      options_(options),
      load_buffers_(static_cast<size_t>(std::max(1, options.clients)) + 1,
                    std::vector<std::byte>(options.block_size)),
      mu_(runtime) {}

DataWorkload::~DataWorkload() { Stop(); }

void DataWorkload::Start() {
  if (options_.save_rate_per_s <= 0 && options_.load_rate_per_s <= 0) return;
  const int clients = std::max(1, options_.clients);
  for (int c = 0; c < clients; ++c) {
    threads_.push_back(runtime_.Spawn("kvc_load" + std::to_string(c), [this, c] { Client(c); }));
  }
}

void DataWorkload::Stop() {
  stop_ = true;
  for (Thread& t : threads_) t.Join();
  threads_.clear();
}

void DataWorkload::Fill(int64_t key, int64_t version, std::vector<std::byte>& out) const {
  // Word i is Mix64(base + i): a pure function of (seed, key, version, i), cheap enough that the
  // simulator's data plane is not spent generating bytes.
  const uint64_t base =
      Rng(options_.seed).Split("block").Split(static_cast<uint64_t>(key)).Split(static_cast<uint64_t>(version)).NextU64();
  size_t i = 0;
  for (uint64_t word = 0; i + 8 <= out.size(); i += 8, ++word) {
    const uint64_t v = Mix64(base + word);
    std::memcpy(out.data() + i, &v, 8);
  }
  if (i < out.size()) {
    const uint64_t v = Mix64(base + i / 8);
    std::memcpy(out.data() + i, &v, out.size() - i);
  }
}

void DataWorkload::Client(int index) {
  const int clients = std::max(1, options_.clients);
  Rng rng = Rng(options_.seed).Split("workload").Split(static_cast<uint64_t>(index));
  const double save_rate = options_.save_rate_per_s / clients;
  const double load_rate = options_.load_rate_per_s / clients;
  auto period = [](double rate) {
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(1.0 / rate));
  };
  const MonoTime start = runtime_.Now();
  std::optional<MonoTime> next_save, next_load;
  if (save_rate > 0) next_save = start;
  if (load_rate > 0) next_load = start + period(load_rate) / 2;
  while (!stop_) {
    const bool save_first = next_save && (!next_load || *next_save <= *next_load);
    MonoTime& due = save_first ? *next_save : *next_load;
    const MonoTime now = runtime_.Now();
    if (due > now) {
      // Short sleeps so Stop() is seen promptly.
      runtime_.SleepUntil(std::min(due, now + std::chrono::milliseconds(50)));
      continue;
    }
    if (save_first) {
      SaveOne(rng);
    } else {
      LoadOne(rng, load_buffers_[static_cast<size_t>(index)]);
    }
    due += period(save_first ? save_rate : load_rate);
    if (runtime_.Now() - due > std::chrono::seconds(1)) due = runtime_.Now();  // drop the backlog of a stall
  }
}

void DataWorkload::SaveOne(Rng& rng) {
  const int64_t key = static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(std::max<int64_t>(1, options_.key_space))));
  int64_t version;
  {
    MutexLock lock(mu_);
    version = next_version_[key]++;
  }
  std::vector<std::byte> data(options_.block_size);
  Fill(key, version, data);
  const std::vector<std::string> keys = {DataWorkloadKey(key, version)};
  const std::vector<client::BlockBuffers> blocks = {{std::span<std::byte>(data)}};
  const uint64_t epoch = power_epoch_.load();
  Result<client::SaveResult> r = transfer_.Save(keys, blocks);
  const bool cut = power_epoch_.load() != epoch;
  MutexLock lock(mu_);
  if (cut) {
    ++counts_.saves_cut_by_power_loss;
    return;
  }
  if (!r.ok()) {
    ++counts_.errors[StatusCodeName(r.status().code())];
    return;
  }
  ++counts_.saves;
  acked_.push_back(Acked{key, version});
}

void DataWorkload::LosePower(const std::function<void()>& crash) {
  power_epoch_.fetch_add(1);
  crash();
  power_epoch_.fetch_add(1);
}

void DataWorkload::LoadOne(Rng& rng, std::vector<std::byte>& buffer) {
  Acked block{};
  {
    MutexLock lock(mu_);
    if (acked_.empty()) return;
    block = acked_[rng.Uniform(acked_.size())];
  }
  const Status s = LoadAndCheck(block, false, buffer);
  MutexLock lock(mu_);
  if (s.ok()) {
    ++counts_.loads;
  } else {
    ++counts_.errors[StatusCodeName(s.code())];
  }
}

Status DataWorkload::LoadAndCheck(const Acked& block, bool readback, std::vector<std::byte>& got) {
  const std::vector<std::string> keys = {DataWorkloadKey(block.key, block.version)};
  const std::vector<client::BlockBuffers> blocks = {{std::span<std::byte>(got)}};
  const client::LoadResult r = transfer_.LoadDetailed(keys, blocks);
  if (!r.lost.empty()) {
    MutexLock lock(mu_);
    counts_.lost_dropped += static_cast<int64_t>(r.lost.size());
  }
  if (!r.misrouted.empty()) {
    MutexLock lock(mu_);
    counts_.misrouted_reported += static_cast<int64_t>(r.misrouted.size());
  }
  if (r.status.code() == StatusCode::kChecksumMismatch) {
    MutexLock lock(mu_);
    ++counts_.corrupt_detected;
    return r.status;
  }
  if (!r.status.ok()) return r.status;
  std::vector<std::byte> want(got.size());
  Fill(block.key, block.version, want);
  if (std::memcmp(got.data(), want.data(), got.size()) != 0) {
    MutexLock lock(mu_);
    ++counts_.corrupt_returned;
    if (counts_.unreadable_examples.size() < kMaxExamples) {
      counts_.unreadable_examples.push_back(keys[0] + (readback ? " (readback)" : "") +
                                            ": load returned OK with wrong bytes");
    }
    return Status::Internal("wrong bytes returned as good");
  }
  return Status::Ok();
}

void DataWorkload::VerifyAll() {
  std::vector<Acked> all;
  {
    MutexLock lock(mu_);
    all = acked_;
    counts_.acked_blocks = static_cast<int64_t>(all.size());
  }
  std::vector<std::byte>& buffer = load_buffers_.back();
  for (const Acked& block : all) {
    Status s = LoadAndCheck(block, true, buffer);
    // A transient answer (a failover still settling) gets a few more tries; a missing or wrong
    // block does not change by asking again.
    for (int retry = 0; retry < options_.readback_retries &&
                        (s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kNotLeader ||
                         s.code() == StatusCode::kTimeout);
         ++retry) {
      runtime_.SleepFor(options_.readback_retry_wait);
      s = LoadAndCheck(block, true, buffer);
    }
    if (s.ok()) continue;
    MutexLock lock(mu_);
    ++counts_.acked_unreadable;
    ++counts_.errors[StatusCodeName(s.code())];
    if (counts_.unreadable_examples.size() < kMaxExamples) {
      counts_.unreadable_examples.push_back(DataWorkloadKey(block.key, block.version) + " (readback): " + s.ToString());
    }
  }
}

DataWorkloadCounts DataWorkload::Counts() const {
  MutexLock lock(mu_);
  return counts_;
}

}  // namespace kvchaos::sim
