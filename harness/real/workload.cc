// The real-mode workload client; see workload.h.
#include "harness/real/workload.h"

#include <algorithm>
#include <cstring>

#include "core/common/rng.h"
#include "core/common/thread_util.h"
#include "harness/real/child_process.h"

namespace kvchaos::harness::real {
namespace {

std::string MetaKey(int64_t key, int64_t version) {
  return "k" + std::to_string(key) + ".v" + std::to_string(version);
}

client::LeaderDiscoveryOptions Discovery(std::vector<std::string> bootstrap) {
  client::LeaderDiscoveryOptions o;
  o.bootstrap = std::move(bootstrap);
  // Bounded so a call stuck in a failover returns (as an error) within a few seconds, and so
  // teardown never waits long for a client thread.
  o.max_attempts = 8;
  o.initial_backoff_ms = 20;
  o.max_backoff_ms = 400;
  o.request_timeout_ms = 1000;
  return o;
}

constexpr size_t kMaxExamples = 5;

}  // namespace

Workload::Workload(const Scenario& scenario, uint64_t seed, std::vector<std::string> backends,
                   std::vector<std::string> bootstrap)
    : scenario_(scenario), seed_(seed), backends_(std::move(backends)),
      meta_(Runtime::Real(), Discovery(std::move(bootstrap))) {}

Workload::~Workload() { Stop(); }

Status Workload::Setup(Duration timeout) {
  meta::StorageConfig storage;
  storage.type = "posix";
  storage.global_unique_name = kStorageName;
  storage.integrity.enable_meta_checksum = true;
  storage.integrity.algo = integrity::ChecksumAlgo::kCrc64Full;
  Runtime& rt = Runtime::Real();
  const MonoTime deadline = rt.Now() + timeout;
  Status added;
  do {
    added = meta_.AddStorage(storage);
    if (added.ok() || added.code() == StatusCode::kAlreadyExists) break;
    if (StopRequested()) return Interrupted("waiting for a leader to register the storage");
    rt.SleepFor(std::chrono::milliseconds(100));
  } while (rt.Now() < deadline);
  if (!added.ok() && added.code() != StatusCode::kAlreadyExists) {
    return Status::Unavailable("no leader registered the storage within " + std::to_string(ToMillis(timeout)) +
                               " ms: " + added.ToString());
  }

  store::PosixStoreConfig config;
  config.storage_backends = backends_;
  config.io_engine = store::IoEngineKind::kPsync;
  config.block_size = scenario_.workload.block_size_bytes;
  config.shard_size = config.block_size;
  config.tensor_size = config.block_size;
  config.concurrency = 4;
  config.durable_commit = scenario_.topology.durable_commit;
  // A hung backend must cost one attempt, not the run: each attempt gets timeout_ms / n.
  config.timeout_ms = 2000 * static_cast<int64_t>(backends_.size());
  config.health.health_check_interval_s = 1;
  config.health.health_check_timeout_s = 0.5;
  config.health.health_window_size = 4;
  config.health.failure_threshold = 2;
  if (Status s = store_.Setup(config); !s.ok()) return Status(s.code(), "store setup: " + s.message());

  client::TransferClientOptions options;
  options.storage = kStorageName;
  options.block_size = config.block_size;
  options.shard_size = config.shard_size;
  Result<std::unique_ptr<client::TransferClient>> transfer = client::TransferClient::Create(meta_, store_, options);
  if (!transfer.ok()) return Status(transfer.status().code(), "transfer client: " + transfer.status().message());
  transfer_ = std::move(*transfer);
  return Status::Ok();
}

void Workload::Start() {
  if (!transfer_) return;
  const bool data_plane = scenario_.workload.save_rate_per_s > 0 || scenario_.workload.load_rate_per_s > 0;
  if (!data_plane) return;
  const int clients = std::max(1, scenario_.workload.clients);
  for (int c = 0; c < clients; ++c) {
    threads_.emplace_back([this, c] {
      SetCurrentThreadName("kvc_load" + std::to_string(c));
      Client(c);
    });
  }
}

void Workload::Stop() {
  stop_ = true;
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void Workload::Fill(int64_t key, int64_t version, std::vector<std::byte>& out) const {
  Rng rng = Rng(seed_).Split("block").Split(static_cast<uint64_t>(key)).Split(static_cast<uint64_t>(version));
  size_t i = 0;
  for (; i + 8 <= out.size(); i += 8) {
    const uint64_t v = rng.NextU64();
    std::memcpy(out.data() + i, &v, 8);
  }
  if (i < out.size()) {
    const uint64_t v = rng.NextU64();
    std::memcpy(out.data() + i, &v, out.size() - i);
  }
}

void Workload::CountError(const Status& s) {
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_.errors[StatusCodeName(s.code())];
}

void Workload::Client(int index) {
  Runtime& rt = Runtime::Real();
  const int clients = std::max(1, scenario_.workload.clients);
  Rng rng = Rng(seed_).Split("workload").Split(static_cast<uint64_t>(index));
  const double save_rate = scenario_.workload.save_rate_per_s / clients;
  const double load_rate = scenario_.workload.load_rate_per_s / clients;
  auto period = [](double rate) {
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(1.0 / rate));
  };
  const MonoTime start = rt.Now();
  std::optional<MonoTime> next_save, next_load;
  if (save_rate > 0) next_save = start;
  if (load_rate > 0) next_load = start + period(load_rate) / 2;
  while (!stop_) {
    const bool save_first = next_save && (!next_load || *next_save <= *next_load);
    MonoTime& due = save_first ? *next_save : *next_load;
    const MonoTime now = rt.Now();
    if (due > now) {
      // Short sleeps so Stop() is seen promptly.
      rt.SleepUntil(std::min(due, now + std::chrono::milliseconds(50)));
      continue;
    }
    if (save_first) {
      SaveOne(rng);
    } else {
      LoadOne(rng);
    }
    due += period(save_first ? save_rate : load_rate);
    if (rt.Now() - due > std::chrono::seconds(1)) due = rt.Now();  // drop the backlog of a stall
  }
}

void Workload::SaveOne(Rng& rng) {
  const int64_t key = static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(std::max<int64_t>(1, scenario_.workload.key_space))));
  int64_t version;
  {
    std::lock_guard<std::mutex> lock(mu_);
    version = next_version_[key]++;
  }
  std::vector<std::byte> data(scenario_.workload.block_size_bytes);
  Fill(key, version, data);
  const std::vector<std::string> keys = {MetaKey(key, version)};
  const std::vector<client::BlockBuffers> blocks = {{std::span<std::byte>(data)}};
  Result<client::SaveResult> r = transfer_->Save(keys, blocks);
  if (!r.ok()) {
    CountError(r.status());
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_.saves;
  acked_.push_back(Acked{key, version});
}

void Workload::LoadOne(Rng& rng) {
  Acked block{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (acked_.empty()) return;
    block = acked_[rng.Uniform(acked_.size())];
  }
  const Status s = LoadAndCheck(block, false);
  std::lock_guard<std::mutex> lock(mu_);
  if (s.ok()) {
    ++counts_.loads;
  } else {
    ++counts_.errors[StatusCodeName(s.code())];
  }
}

Status Workload::LoadAndCheck(const Acked& block, bool readback) {
  std::vector<std::byte> got(scenario_.workload.block_size_bytes);
  const std::vector<std::string> keys = {MetaKey(block.key, block.version)};
  const std::vector<client::BlockBuffers> blocks = {{std::span<std::byte>(got)}};
  const client::LoadResult r = transfer_->LoadDetailed(keys, blocks);
  if (r.status.code() == StatusCode::kChecksumMismatch) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.corrupt_detected;
    return r.status;
  }
  if (!r.status.ok()) return r.status;
  std::vector<std::byte> want(got.size());
  Fill(block.key, block.version, want);
  if (got != want) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.corrupt_returned;
    if (counts_.unreadable_examples.size() < kMaxExamples) {
      counts_.unreadable_examples.push_back(keys[0] + (readback ? " (readback)" : "") +
                                            ": load returned OK with wrong bytes");
    }
    return Status::Internal("wrong bytes returned as good");
  }
  return Status::Ok();
}

void Workload::VerifyAll() {
  if (!transfer_) return;
  std::vector<Acked> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all = acked_;
    counts_.acked_blocks = static_cast<int64_t>(all.size());
  }
  for (const Acked& block : all) {
    Status s = LoadAndCheck(block, true);
    // A transient answer (a failover still settling) gets a few more tries; a missing or wrong
    // block does not change by asking again.
    for (int retry = 0; retry < 3 && (s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kNotLeader ||
                                      s.code() == StatusCode::kTimeout);
         ++retry) {
      Runtime::Real().SleepFor(std::chrono::milliseconds(500));
      s = LoadAndCheck(block, true);
    }
    if (s.ok()) continue;
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.acked_unreadable;
    ++counts_.errors[StatusCodeName(s.code())];
    if (counts_.unreadable_examples.size() < kMaxExamples) {
      counts_.unreadable_examples.push_back(MetaKey(block.key, block.version) + " (readback): " + s.ToString());
    }
  }
}

WorkloadCounts Workload::Counts() const {
  WorkloadCounts counts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts = counts_;
  }
  if (transfer_) counts.health_transitions = static_cast<int64_t>(store_.Transitions().size());
  return counts;
}

}  // namespace kvchaos::harness::real
