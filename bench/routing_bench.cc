// Routing cost on the I/O path: choosing a block's backend (lock-free snapshot read) and recording
// the I/O result in that backend's window (a CAS, or a plain load in the steady state), per I/O.
// Targets (issue 3): select + record <= 100 ns single-threaded; 2 threads >= 1.6x one thread's
// throughput (the path takes no lock, so threads should not serialise).
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "core/common/runtime.h"
#include "core/store/backend_set.h"
#include "core/store/block_id.h"

namespace {

using kvchaos::store::BackendSet;
using kvchaos::store::BlockId;
using kvchaos::store::BlockIdHasher;
using kvchaos::store::SampleSource;

constexpr int kBackends = 4;
constexpr size_t kIds = 4096;

BackendSet& SharedSet() {
  static BackendSet set(kvchaos::Runtime::Real(), {"/p0", "/p1", "/p2", "/p3"}, 8, 2);
  return set;
}

std::vector<BlockId> Ids(uint64_t salt) {
  std::vector<BlockId> ids(kIds);
  for (size_t i = 0; i < kIds; ++i) {
    for (int b = 0; b < 8; ++b) ids[i].bytes[b] = static_cast<uint8_t>((i * 2654435761u + salt) >> (8 * b));
    ids[i].bytes[8] = static_cast<uint8_t>(salt);
  }
  return ids;
}

// Hash + select + record, as one business I/O does.
void BM_HashSelectRecord(benchmark::State& state) {
  BackendSet& set = SharedSet();
  const std::vector<BlockId> ids = Ids(static_cast<uint64_t>(state.thread_index()));
  size_t i = 0;
  for (auto _ : state) {
    const uint64_t hash = BlockIdHasher{}(ids[i++ % kIds]);
    const int backend = set.SelectNext(hash, 0);
    benchmark::DoNotOptimize(set.Record(backend, true, SampleSource::kBusiness));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HashSelectRecord)->Threads(1)->Threads(2)->UseRealTime();

// Select + record only (hash precomputed).
void BM_SelectRecord(benchmark::State& state) {
  BackendSet& set = SharedSet();
  std::vector<uint64_t> hashes;
  for (const BlockId& id : Ids(static_cast<uint64_t>(state.thread_index()) + 100)) hashes.push_back(BlockIdHasher{}(id));
  size_t i = 0;
  for (auto _ : state) {
    const int backend = set.SelectNext(hashes[i++ % kIds], 0);
    benchmark::DoNotOptimize(set.Record(backend, true, SampleSource::kBusiness));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SelectRecord)->Threads(1)->Threads(2)->UseRealTime();

// With one path excluded: routing walks past it, and failures keep the windows changing (CAS).
void BM_SelectRecordDegraded(benchmark::State& state) {
  static BackendSet set(kvchaos::Runtime::Real(), {"/p0", "/p1", "/p2", "/p3"}, 8, 2);
  if (state.thread_index() == 0) {
    set.Record(1, false, SampleSource::kBusiness);
    set.Record(1, false, SampleSource::kBusiness);
  }
  std::vector<uint64_t> hashes;
  for (const BlockId& id : Ids(static_cast<uint64_t>(state.thread_index()) + 200)) hashes.push_back(BlockIdHasher{}(id));
  size_t i = 0;
  for (auto _ : state) {
    const int backend = set.SelectNext(hashes[i % kIds], 0);
    // One result in 64 is a failure on a healthy path: real CAS traffic, rarely a trip.
    benchmark::DoNotOptimize(set.Record(backend, (i & 63) != 0 || backend == 1, SampleSource::kBusiness));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SelectRecordDegraded)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
