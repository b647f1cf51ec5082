// The real-mode workload client; see workload.h.
#include "harness/real/workload.h"

#include "harness/real/child_process.h"

namespace kvchaos::harness::real {
namespace {

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

}  // namespace

Workload::Workload(const Scenario& scenario, uint64_t seed, std::vector<std::string> backends,
                   std::vector<std::string> bootstrap)
    : scenario_(scenario), seed_(seed), backends_(std::move(backends)),
      meta_(Runtime::Real(), Discovery(std::move(bootstrap))) {}

Workload::~Workload() { Stop(); }

Status Workload::Setup(Duration timeout) {
  const meta::StorageConfig storage = sim::DataWorkloadStorage(kStorageName, scenario_.topology.inline_header);
  Runtime& rt = Runtime::Real();
  const MonoTime deadline = rt.Now() + timeout;
  Status added;
  do {
    added = meta_.AddStorage(storage);
    // AlreadyExists means another config holds the name: saving into it would not be what the
    // scenario asked for (checksums off, say), so it is an error, not a registration.
    if (added.ok() || added.code() == StatusCode::kAlreadyExists) break;
    if (StopRequested()) return Interrupted("waiting for a leader to register the storage");
    rt.SleepFor(std::chrono::milliseconds(100));
  } while (rt.Now() < deadline);
  if (added.code() == StatusCode::kAlreadyExists) {
    return Status(added.code(), "registering storage '" + std::string(kStorageName) + "': " + added.message());
  }
  if (!added.ok()) {
    return Status::Unavailable("no leader registered the storage within " + std::to_string(ToMillis(timeout)) +
                               " ms: " + added.ToString());
  }

  const store::PosixStoreConfig config = sim::DataWorkloadStoreConfig(
      backends_, scenario_.workload.block_size_bytes, store::IoEngineKind::kPsync, scenario_.topology.durable_commit);
  if (Status s = store_.Setup(config); !s.ok()) return Status(s.code(), "store setup: " + s.message());

  client::TransferClientOptions options;
  options.storage = kStorageName;
  options.block_size = config.block_size;
  options.shard_size = config.shard_size;
  Result<std::unique_ptr<client::TransferClient>> transfer = client::TransferClient::Create(recording_, store_, options);
  if (!transfer.ok()) return Status(transfer.status().code(), "transfer client: " + transfer.status().message());
  transfer_ = std::move(*transfer);
  sim::DataWorkloadOptions load;
  load.seed = seed_;
  load.save_rate_per_s = scenario_.workload.save_rate_per_s;
  load.load_rate_per_s = scenario_.workload.load_rate_per_s;
  load.block_size = scenario_.workload.block_size_bytes;
  load.key_space = scenario_.workload.key_space;
  load.clients = scenario_.workload.clients;
  load_ = std::make_unique<sim::DataWorkload>(Runtime::Real(), *transfer_, load);
  return Status::Ok();
}

void Workload::Start() {
  if (load_) load_->Start();
}

void Workload::Stop() {
  if (load_) load_->Stop();
}

void Workload::VerifyAll() {
  if (load_) load_->VerifyAll();
}

void Workload::LosePower(const std::function<void()>& crash) {
  if (load_) {
    load_->LosePower(crash);
  } else {
    crash();
  }
}

WorkloadCounts Workload::Counts() const {
  WorkloadCounts counts;
  if (load_) static_cast<sim::DataWorkloadCounts&>(counts) = load_->Counts();
  if (transfer_) counts.health_transitions = static_cast<int64_t>(store_.Transitions().size());
  return counts;
}

}  // namespace kvchaos::harness::real
