// TransferClient: Save/Load over a Store with checksums kept in meta (see the header).
#include "core/client/transfer_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>
#include <tuple>

#include "core/common/thread_util.h"
#include "core/meta/inline_header.h"
#include "core/store/aligned_buffer.h"

namespace kvchaos::client {
namespace {

using integrity::ChecksumAlgo;
using integrity::VerifyStage;

// "k1, k2, k3 and 4 more": keys named in a message without flooding it.
std::string NameKeys(std::span<const std::string> keys, std::span<const size_t> which) {
  std::string out;
  const size_t shown = std::min<size_t>(which.size(), 8);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += "block " + std::to_string(which[i]) + " '" + keys[which[i]] + "'";
  }
  if (which.size() > shown) out += " and " + std::to_string(which.size() - shown) + " more";
  return out;
}

// The CPUs this process may run threads on (its affinity mask), at least 1.
size_t UsableCores() {
  const size_t affinity = CurrentThreadAffinity().size();
  if (affinity > 0) return affinity;
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

static_assert(meta::InlineHeader::kBytes == store::kInlineHeaderBytes, "the header fills the store's header region");
static_assert(meta::InlineHeader::kBytes == store::AlignedBuffer::kAlignment, "the header keeps direct I/O aligned");

// Whether blocks written under `integrity` carry an inline header.
bool WritesHeaders(const integrity::DataIntegrityConfig& integrity) {
  return integrity.enable_inline_header && integrity.inline_header_version >= 1;
}

// How LoadAt's layout-mismatch status starts (Scrub tells it from other InvalidArguments).
constexpr std::string_view kLayoutMismatchPrefix = "Load: layout mismatch: ";

std::vector<uint64_t> SizesOf(const BlockBuffers& iovs) {
  std::vector<uint64_t> sizes;
  sizes.reserve(iovs.size());
  for (const auto& iov : iovs) sizes.push_back(iov.size());
  return sizes;
}

// Views of `storage` cut into `sizes` (which add up to storage's size).
BlockBuffers CutInto(std::span<std::byte> storage, std::span<const uint64_t> sizes) {
  BlockBuffers out;
  out.reserve(sizes.size());
  uint64_t off = 0;
  for (uint64_t size : sizes) {
    out.push_back(storage.subspan(off, size));
    off += size;
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<TransferClient>> TransferClient::Create(MetaClient& meta, store::Store& store,
                                                               TransferClientOptions options) {
  if (options.storage.empty()) return Status::InvalidConfig("TransferClient: storage: empty");
  if (std::optional<store::BlockGeometry> geometry = store.Geometry()) {
    // The store's sizes are the truth; an option repeating them must agree.
    for (auto [name, given, actual] : {std::tuple{"block_size", &options.block_size, geometry->block_size},
                                       std::tuple{"shard_size", &options.shard_size, geometry->shard_size}}) {
      if (*given != 0 && *given != actual) {
        return Status::InvalidConfig(std::string("TransferClient: ") + name + " " + std::to_string(*given) +
                                     " differs from the store's " + name + " " + std::to_string(actual) +
                                     " (leave it 0 to take the store's)");
      }
      *given = actual;
    }
  }
  if (options.shard_size == 0 || options.block_size == 0 || options.block_size % options.shard_size != 0) {
    return Status::InvalidConfig("TransferClient: block_size " + std::to_string(options.block_size) +
                                 " must be a positive multiple of shard_size " + std::to_string(options.shard_size) +
                                 " (the store does not say its sizes, so both must be given)");
  }
  Result<meta::StorageConfig> config = meta.GetStorageConfig(options.storage);
  if (!config.ok()) return config.status();
  // The client checks the same rules as the registry, so a config that slipped past an older
  // server is still refused here rather than half-honoured.
  KVCHAOS_RETURN_IF_ERROR(config->Validate());
  KVCHAOS_RETURN_IF_ERROR(integrity::CheckStrictModeEnv());
  Result<size_t> width = integrity::SampleWidthFromEnv();
  if (!width.ok()) return width.status();
  if (options.runtime == nullptr) return Status::InvalidConfig("TransferClient: runtime: null");
  size_t threads = options.checksum_threads;
  if (threads > TransferClientOptions::kMaxChecksumThreads) {
    return Status::InvalidConfig("TransferClient: checksum_threads " + std::to_string(threads) + " is more than " +
                                 std::to_string(TransferClientOptions::kMaxChecksumThreads));
  }
  if (threads == 0) {
    // As many checksums at once as the store has transfers in flight, but no more than the CPUs.
    // Only the real runtime has CPUs to count: a simulated run must not depend on its machine.
    threads = static_cast<size_t>(std::max(1, store.Concurrency()));
    if (options.runtime == &Runtime::Real()) threads = std::min(threads, UsableCores());
  }
  return std::unique_ptr<TransferClient>(
      new TransferClient(meta, store, std::move(options), *config, *width, threads));
}

TransferClient::TransferClient(MetaClient& meta, store::Store& store, TransferClientOptions options,
                               meta::StorageConfig config, size_t sample_width, size_t checksum_threads)
    : meta_(meta),
      store_(store),
      options_(std::move(options)),
      config_(std::move(config)),
      sample_width_(sample_width),
      // The caller computes too, so the pool has one thread fewer.
      pool_(std::make_unique<WorkPool>(*options_.runtime, checksum_threads - 1, "kvc_checksum")),
      report_mu_(*options_.runtime) {}

TransferClient::~TransferClient() = default;

Status TransferClient::CheckShapes(std::span<const std::string> keys, std::span<const BlockBuffers> blocks) const {
  if (keys.size() != blocks.size()) {
    return Status::InvalidArgument(std::to_string(keys.size()) + " keys but " + std::to_string(blocks.size()) +
                                   " blocks");
  }
  for (size_t b = 0; b < blocks.size(); ++b) {
    uint64_t bytes = 0;
    for (const auto& iov : blocks[b]) bytes += iov.size();
    if (bytes != options_.block_size) {
      return Status::InvalidArgument("block " + std::to_string(b) + " ('" + keys[b] + "'): its IOVs hold " +
                                     std::to_string(bytes) + " bytes, the store's block size is " +
                                     std::to_string(options_.block_size));
    }
  }
  return Status::Ok();
}

Result<store::TransferTask> TransferClient::MakeTask(std::span<const size_t> which, std::span<const store::BlockId> ids,
                                                     std::span<const BlockBuffers> blocks) const {
  store::TransferTask task;
  for (size_t w = 0; w < which.size(); ++w) {
    const BlockBuffers& iovs = blocks[which[w]];
    store::Shard shard{ids[w], 0, {}};
    uint64_t in_shard = 0;
    for (std::span<std::byte> iov : iovs) {
      // An IOV may straddle shards: cut it at the boundary.
      while (!iov.empty()) {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(iov.size(), options_.shard_size - in_shard));
        shard.buffers.push_back(iov.first(take));
        iov = iov.subspan(take);
        in_shard += take;
        if (in_shard == options_.shard_size) {
          task.shards.push_back(std::move(shard));
          shard = store::Shard{ids[w], static_cast<uint32_t>(task.shards.back().index + 1), {}};
          in_shard = 0;
        }
      }
    }
  }
  return task;
}

Result<int64_t> TransferClient::Compute(ChecksumAlgo algo, const BlockBuffers& block) const {
  std::vector<integrity::Iov> iovs;
  iovs.reserve(block.size());
  for (const auto& iov : block) iovs.emplace_back(iov.data(), iov.size());
  const integrity::Block view(iovs);
  Result<std::vector<int64_t>> sums = integrity::ChecksumComputer({algo, sample_width_}).Compute({&view, 1});
  if (!sums.ok()) return sums.status();
  return sums->front();
}

void TransferClient::StartChecksums(WorkPool::Batch& batch, ChecksumAlgo algo, std::span<const size_t> which,
                                    std::span<const BlockBuffers> blocks, std::vector<int64_t>* sums,
                                    std::vector<Status>* errors) const {
  sums->assign(which.size(), 0);
  errors->assign(which.size(), Status::Ok());
  for (size_t w = 0; w < which.size(); ++w) {
    // Each job writes only its own entries; Batch::Wait orders them before the caller's reads.
    batch.Add([this, algo, w, &block = blocks[which[w]], sums, errors, i = which[w]] {
      Result<int64_t> sum = Compute(algo, block);
      if (sum.ok()) {
        (*sums)[w] = *sum;
      } else {
        (*errors)[w] = sum.status().WithContext("block " + std::to_string(i));
      }
    });
  }
}

void TransferClient::Report(const ChecksumMismatchEvent& e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++mismatches_[e.storage];
  }
  spdlog::error("checksum mismatch ({}): key '{}' storage '{}' location '{}' algo {}: expected {} actual {}",
                integrity::VerifyStageName(e.stage), e.key, e.storage, e.location, integrity::ChecksumAlgoName(e.algo),
                e.expected, e.actual);
  if (options_.on_mismatch) {
    MutexLock lock(report_mu_);
    options_.on_mismatch(e);
  }
}

std::map<std::string, uint64_t> TransferClient::MismatchCounts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mismatches_;
}

void TransferClient::Report(const MisroutedReadEvent& e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++misrouted_[e.storage];
  }
  spdlog::error("misrouted read: key '{}' storage '{}' location '{}' holds the block of {}", e.key, e.storage,
                e.location, e.found);
  if (options_.on_misrouted) {
    MutexLock lock(report_mu_);
    options_.on_misrouted(e);
  }
}

std::map<std::string, uint64_t> TransferClient::MisroutedCounts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misrouted_;
}

uint64_t TransferClient::stored_block_bytes() const {
  return options_.block_size + (WritesHeaders(config_.integrity) ? store::kInlineHeaderBytes : 0);
}

std::vector<store::AlignedBuffer> TransferClient::MakeHeaders(std::span<const std::string> keys,
                                                              std::span<const size_t> which,
                                                              std::span<const BlockBuffers> blocks,
                                                              std::span<const int64_t> sums, ChecksumAlgo algo) const {
  std::vector<store::AlignedBuffer> headers;
  headers.reserve(which.size());
  for (size_t w = 0; w < which.size(); ++w) {
    const size_t i = which[w];
    Result<meta::IovLayout> layout = meta::IovLayout::FromSizes(SizesOf(blocks[i]));
    const std::optional<int64_t> sum = sums.empty() ? std::nullopt : std::optional<int64_t>(sums[w]);
    headers.emplace_back(meta::InlineHeader::kBytes);
    meta::InlineHeader::For(keys[i], options_.block_size, sum, algo, layout.ok() ? *layout : meta::IovLayout())
        .Encode(headers.back().span());
  }
  return headers;
}

Result<SaveResult> TransferClient::Save(std::span<const std::string> keys, std::span<const BlockBuffers> blocks,
                                        const std::vector<int64_t>* caller_checksums) {
  KVCHAOS_RETURN_IF_ERROR(CheckShapes(keys, blocks));
  if (caller_checksums != nullptr && caller_checksums->size() != keys.size()) {
    return Status::InvalidArgument("Save: " + std::to_string(caller_checksums->size()) + " caller checksums for " +
                                   std::to_string(keys.size()) + " keys");
  }
  Result<meta::WriteSession> session = meta_.StartWrite(keys, options_.storage);
  if (!session.ok()) return session.status().WithContext("Save: StartWrite");
  const integrity::DataIntegrityConfig& integrity = session->integrity;
  // The config may have changed since Create: never write what this build cannot honour.
  KVCHAOS_RETURN_IF_ERROR(integrity.Validate("Save: storage '" + options_.storage + "'.integrity"));
  const bool headers = WritesHeaders(integrity);

  SaveResult result;
  result.written = session->to_write;
  std::vector<size_t> which;
  std::vector<store::BlockId> ids;
  std::vector<std::string> written_keys;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!session->to_write[i]) continue;
    Result<store::BlockId> id = store::BlockId::FromHex(session->locations[i].uri);
    if (!id.ok()) return id.status().WithContext("Save: location of '" + keys[i] + "'");
    which.push_back(i);
    ids.push_back(*id);
    written_keys.push_back(keys[i]);
  }

  std::vector<int64_t> sums;
  std::vector<Status> sum_errors;
  WorkPool::Batch checksums(*pool_);  // waited for before any return: its jobs read `blocks`
  auto checksums_done = [&]() -> Status {
    checksums.Wait();
    for (const Status& e : sum_errors) {
      if (!e.ok()) return e.WithContext("Save: checksum");
    }
    return Status::Ok();
  };
  const bool want_sums = (integrity.enable_meta_checksum || caller_checksums != nullptr) && !which.empty();
  // Only crc64_full, which accepts every layout, runs while the Dump writes (see the file comment).
  const bool overlapped = want_sums && caller_checksums == nullptr && integrity.algo == ChecksumAlgo::kCrc64Full;
  if (want_sums && !overlapped) {
    StartChecksums(checksums, integrity.algo, which, blocks, &sums, &sum_errors);
    KVCHAOS_RETURN_IF_ERROR(checksums_done());
  }
  if (caller_checksums != nullptr && !which.empty()) {
    std::vector<int64_t> expected;
    for (size_t i : which) expected.push_back((*caller_checksums)[i]);
    Result<integrity::VerifyResult> v = integrity::VerifyBatchChecksums(expected, sums, VerifyStage::kWriteInput);
    if (!v.ok()) return v.status();
    if (!v->ok()) {
      std::vector<size_t> faulty;
      for (size_t f : v->faulty) {
        faulty.push_back(which[f]);
        Report({keys[which[f]], options_.storage, session->locations[which[f]].uri, integrity.algo,
                VerifyStage::kWriteInput, expected[f], sums[f]});
      }
      return Status::ChecksumMismatch("Save: the data differs from the caller's checksums for " +
                                      NameKeys(keys, faulty) + "; nothing was written");
    }
  }

  if (!which.empty()) {
    Result<store::TransferTask> task = MakeTask(which, ids, blocks);
    if (!task.ok()) return task.status();
    task->inline_header = headers;
    // A header names the block's checksum, so it goes with the data only when the checksums are
    // known before the Dump; when they are computed while it runs, the headers follow in a second
    // task, which then holds each block's last shard and so its commit.
    std::vector<store::AlignedBuffer> header_buffers;
    auto add_headers = [&](store::TransferTask& t) {
      header_buffers = MakeHeaders(keys, which, blocks, sums, integrity.algo);
      for (size_t w = 0; w < which.size(); ++w) {
        t.shards.push_back(store::Shard{ids[w], static_cast<uint32_t>(options_.block_size / options_.shard_size),
                                        {header_buffers[w].span()}});
      }
    };
    if (headers && !overlapped) add_headers(*task);
    Result<store::TaskHandle> handle = store_.Dump(std::move(*task));
    if (!handle.ok()) return handle.status().WithContext("Save: Dump");
    Status summed = Status::Ok();
    if (overlapped) {
      // The caller computes with the pool while the store writes the same (read-only) buffers.
      StartChecksums(checksums, integrity.algo, which, blocks, &sums, &sum_errors);
      summed = checksums_done();
    }
    // A failed Put reports no checksums and commits nothing: meta keeps the locations "writing".
    Status dumped = store_.Wait(*handle).WithContext("Save: Dump");
    if (dumped.ok()) dumped = summed;
    if (dumped.ok() && headers && overlapped) {
      store::TransferTask header_task;
      header_task.inline_header = true;
      add_headers(header_task);
      Result<store::TaskHandle> header_handle = store_.Dump(std::move(header_task));
      dumped = header_handle.ok() ? store_.Wait(*header_handle) : header_handle.status();
      dumped = dumped.WithContext("Save: Dump of the inline headers");
    }
    if (!dumped.ok()) {
      // Data written ahead of headers that will not follow would stay in temp files for good.
      if (headers && overlapped) store_.Abandon(ids);
      return dumped;
    }
  }

  const std::vector<int64_t> sent = integrity.enable_meta_checksum ? sums : std::vector<int64_t>{};
  // The layout each checksum was computed over goes with it, so readers and scrubbers need not be
  // told how the block was cut. A block with a zero-length IOV (legal for crc64_full) has no
  // storable layout: its record says "unknown" and a scrub falls back to the configured one.
  std::vector<meta::IovLayout> layouts;
  if (!sent.empty()) {
    for (size_t i : which) {
      Result<meta::IovLayout> layout = meta::IovLayout::FromSizes(SizesOf(blocks[i]));
      layouts.push_back(layout.ok() ? std::move(*layout) : meta::IovLayout());
    }
  }
  if (!written_keys.empty()) {
    KVCHAOS_RETURN_IF_ERROR(
        meta_.FinishWrite(session->session_id, written_keys, sent, {}, layouts, headers ? integrity.inline_header_version : 0)
            .WithContext("Save: FinishWrite"));
  }

  if (options_.verify_meta_round_trip && !sent.empty()) {
    Result<std::vector<std::optional<meta::CacheLocation>>> back = meta_.GetLocations(written_keys);
    if (!back.ok()) return back.status().WithContext("Save: meta round trip");
    std::vector<int64_t> stored(sent.size());
    std::vector<uint8_t> present(sent.size());
    for (size_t w = 0; w < sent.size(); ++w) {
      const std::optional<meta::CacheLocation>& loc = (*back)[w];
      // A location missing or without checksum after a successful FinishWrite is a round-trip
      // fault too: report it as a mismatch against "nothing".
      present[w] = 1;
      stored[w] = loc && loc->checksum_present ? loc->checksum : ~sent[w];
    }
    Result<integrity::VerifyResult> v = integrity::VerifyBatchChecksums(sent, stored, VerifyStage::kMetaRoundTrip);
    if (!v.ok()) return v.status();
    if (!v->ok()) {
      std::vector<size_t> faulty;
      for (size_t f : v->faulty) {
        faulty.push_back(which[f]);
        Report({written_keys[f], options_.storage, session->locations[which[f]].uri, integrity.algo,
                VerifyStage::kMetaRoundTrip, sent[f], stored[f]});
      }
      return Status::ChecksumMismatch("Save: meta returned other checksums than were sent for " +
                                      NameKeys(keys, faulty));
    }
  }

  if (integrity.enable_meta_checksum) {
    result.checksums.assign(keys.size(), 0);
    for (size_t w = 0; w < which.size(); ++w) result.checksums[which[w]] = sums[w];
  }
  return result;
}

LoadResult TransferClient::LoadDetailed(std::span<const std::string> keys, std::span<const BlockBuffers> blocks) {
  LoadResult result;
  result.status = CheckShapes(keys, blocks);
  if (!result.status.ok()) return result;
  result.verified.assign(keys.size(), 0);

  Result<std::vector<std::optional<meta::CacheLocation>>> locs = meta_.GetLocations(keys);
  if (!locs.ok()) {
    result.status = locs.status().WithContext("Load: GetLocations");
    return result;
  }
  if (locs->size() != keys.size()) {
    result.status = Status::Internal("Load: meta returned " + std::to_string(locs->size()) + " locations for " +
                                     std::to_string(keys.size()) + " keys");
    return result;
  }
  return LoadAt(keys, blocks, *locs);
}

LoadResult TransferClient::LoadAt(std::span<const std::string> keys, std::span<const BlockBuffers> blocks,
                                  const std::vector<std::optional<meta::CacheLocation>>& locs) {
  LoadResult result;
  result.verified.assign(keys.size(), 0);
  std::vector<size_t> which;
  std::vector<store::BlockId> ids;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::optional<meta::CacheLocation>& loc = locs[i];
    if (!loc || loc->storage != options_.storage) {
      result.missing.push_back(i);
      continue;
    }
    Result<store::BlockId> id = store::BlockId::FromHex(loc->uri);
    if (!id.ok()) {
      result.status = id.status().WithContext("Load: location of '" + keys[i] + "'");
      return result;
    }
    which.push_back(i);
    ids.push_back(*id);
  }

  // How each block will be checked, decided from meta's record before any byte is read. A block
  // the caller cut otherwise than the writer would fail its checksum under the caller's layout
  // although nothing is damaged, so its bytes are checked under the stored layout instead (copied,
  // since a stored IOV may straddle two of the caller's), when that layout fits the block.
  struct Check {
    bool verify = false;          // compare with the stored checksum
    bool layout_differs = false;  // the stored layout is not the caller's
    bool recut = false;           // compute under the stored layout (a copy)
    std::string layout_problem;   // for the status message, when layout_differs
  };
  std::vector<Check> checks(which.size());
  for (size_t w = 0; w < which.size(); ++w) {
    const size_t i = which[w];
    const meta::CacheLocation& loc = *locs[i];
    Check& check = checks[w];
    bool checkable = true;
    if (loc.iov_layout.known()) {
      const std::vector<uint64_t> given = SizesOf(blocks[i]);
      if (!loc.iov_layout.Matches(given)) {
        check.layout_differs = true;
        check.layout_problem = "block " + std::to_string(i) + " '" + keys[i] + "': stored " +
                               loc.iov_layout.ToString() + ", given " + meta::DescribeIovSizes(given);
        if (loc.iov_layout.total_bytes() != options_.block_size) {
          checkable = false;
          check.layout_problem += " (the stored layout adds up to " + std::to_string(loc.iov_layout.total_bytes()) +
                                  " bytes, the block to " + std::to_string(options_.block_size) +
                                  ": its data cannot be checked)";
        } else if (loc.checksum_present) {
          check.recut = true;
          check.layout_problem += " (data checked under the stored layout)";
        }
      }
    }
    // Each block is checked with the algorithm recorded with its checksum (a storage may have
    // changed algorithm since some blocks were written).
    const bool known_algo =
        loc.checksum_algo == ChecksumAlgo::kCrc32XorInt64 || loc.checksum_algo == ChecksumAlgo::kCrc64Full;
    check.verify = checkable && loc.checksum_present && known_algo && !options_.testing.skip_load_verification;
  }

  // One store task per block, all in flight together, so that a miss is known per block, and one
  // job per block that waits for its read and verifies it at once, while the other reads go on.
  struct Outcome {  // written by the block's job only, read after the batch is waited for
    Status read;      // the store's answer
    Status computed;  // why its checksum could not be computed
    bool verified = false;
    std::optional<ChecksumMismatchEvent> mismatch;  // set when the block is faulty
    // Inline header problems, found before the checksum is looked at (which then is not).
    Status corrupt_header;
    std::optional<MisroutedReadEvent> misroute;
    bool torn = false;
  };
  // A block whose record says it has an inline header is read with it, into its own aligned buffer.
  std::vector<std::unique_ptr<store::AlignedBuffer>> headers(which.size());
  std::vector<Result<store::TaskHandle>> handles;
  handles.reserve(which.size());
  for (size_t w = 0; w < which.size(); ++w) {
    Result<store::TransferTask> task = MakeTask(std::span<const size_t>(&which[w], 1), std::span(&ids[w], 1), blocks);
    if (task.ok() && locs[which[w]]->inline_header_version > 0) {
      headers[w] = std::make_unique<store::AlignedBuffer>(meta::InlineHeader::kBytes);
      task->inline_header = true;
      task->shards.push_back(store::Shard{ids[w], static_cast<uint32_t>(options_.block_size / options_.shard_size),
                                          {headers[w]->span()}});
    }
    handles.push_back(task.ok() ? store_.Load(std::move(*task)) : Result<store::TaskHandle>(task.status()));
  }
  std::vector<Outcome> outcomes(which.size());
  {
    WorkPool::Batch batch(*pool_);
    for (size_t w = 0; w < which.size(); ++w) {
      batch.Add([this, w, &handles, &outcomes, &checks, &which, &blocks, &keys, &locs, &headers] {
        Outcome& out = outcomes[w];
        out.read = handles[w].ok() ? store_.Wait(*handles[w]) : handles[w].status();
        if (!out.read.ok()) return;
        const size_t i = which[w];
        const meta::CacheLocation& loc = *locs[i];
        if (headers[w] && !options_.testing.skip_inline_header_check) {
          // The header first: a block that is not this key's, or not whole, has no checksum of
          // this key's to be compared with.
          Result<meta::InlineHeader> header = meta::InlineHeader::Decode(headers[w]->span());
          if (!header.ok()) {
            out.corrupt_header = header.status().WithContext("block " + std::to_string(i) + " '" + keys[i] +
                                                             "' at location '" + loc.uri + "'");
            spdlog::error("storage '{}': {}", options_.storage, out.corrupt_header.message());
            return;
          }
          if (!header->IsFor(keys[i])) {
            out.misroute = MisroutedReadEvent{keys[i], header->DescribeKey(), options_.storage, loc.uri};
            Report(*out.misroute);
            return;
          }
          if (header->data_length != options_.block_size) {
            out.torn = true;
            spdlog::warn("key '{}' storage '{}' location '{}': its inline header says {} bytes of data, the block has "
                         "{}: a torn block, read as a miss",
                         keys[i], options_.storage, loc.uri, header->data_length, options_.block_size);
            return;
          }
        }
        if (!checks[w].verify) return;
        std::vector<std::byte> copy;
        BlockBuffers recut;
        if (checks[w].recut) {
          copy.resize(options_.block_size);
          size_t off = 0;
          for (const auto& iov : blocks[i]) {
            std::copy(iov.begin(), iov.end(), copy.begin() + static_cast<std::ptrdiff_t>(off));
            off += iov.size();
          }
          recut = CutInto(copy, loc.iov_layout.Sizes());
        }
        Result<int64_t> actual = Compute(loc.checksum_algo, checks[w].recut ? recut : blocks[i]);
        if (!actual.ok()) {
          out.computed = actual.status().WithContext("block " + std::to_string(i));
          return;
        }
        Result<integrity::VerifyResult> v = integrity::VerifyBatchChecksums(
            std::span<const int64_t>(&loc.checksum, 1), std::span<const int64_t>(&*actual, 1), VerifyStage::kReadOutput);
        if (!v.ok()) {
          out.computed = v.status();
          return;
        }
        out.verified = true;
        if (!v->ok()) {
          out.mismatch = ChecksumMismatchEvent{keys[i], options_.storage, loc.uri, loc.checksum_algo,
                                               VerifyStage::kReadOutput, loc.checksum, *actual};
          Report(*out.mismatch);
        }
      });
    }
  }  // every block read and verified (the batch's destructor waits)

  Status failed;  // the first failure other than a miss
  Status uncomputed;  // the first checksum that could not be computed
  std::vector<size_t> missed;  // indexes into `which`
  std::string layout_problems;
  Status corrupt;  // the first damaged inline header
  for (size_t w = 0; w < which.size(); ++w) {
    const Status& s = outcomes[w].read;
    if (s.code() == StatusCode::kNotFound || (s.ok() && outcomes[w].torn)) {
      missed.push_back(w);
      if (s.ok()) result.torn.push_back(which[w]);
    } else if (!s.ok() && failed.ok()) {
      failed = s;
    }
    if (!s.ok() || outcomes[w].torn) continue;
    const size_t i = which[w];
    if (!outcomes[w].corrupt_header.ok()) {
      result.corrupt_header.push_back(i);
      if (corrupt.ok()) corrupt = outcomes[w].corrupt_header;
      continue;
    }
    if (outcomes[w].misroute) {
      result.misrouted.push_back(i);
      result.misroutes.push_back(*outcomes[w].misroute);
      continue;
    }
    if (uncomputed.ok()) uncomputed = outcomes[w].computed;
    result.verified[i] = outcomes[w].verified ? 1 : 0;
    if (outcomes[w].mismatch) {
      result.faulty.push_back(i);
      result.mismatches.push_back(*outcomes[w].mismatch);
    }
    if (checks[w].layout_differs) {
      const meta::CacheLocation& loc = *locs[i];
      result.layout_mismatch.push_back(i);
      spdlog::warn("layout mismatch: key '{}' storage '{}' location '{}': stored {}, given {}", keys[i],
                   options_.storage, loc.uri, loc.iov_layout.ToString(), meta::DescribeIovSizes(SizesOf(blocks[i])));
      if (result.layout_mismatch.size() <= 8) {
        layout_problems += (layout_problems.empty() ? "" : "; ") + checks[w].layout_problem;
      }
    }
  }
  std::vector<uint8_t> headed(which.size());
  for (size_t w = 0; w < which.size(); ++w) headed[w] = locs[which[w]]->inline_header_version > 0 ? 1 : 0;
  ReconcileMisses(keys, which, ids, headed, missed, &result);
  std::sort(result.missing.begin(), result.missing.end());
  if (!failed.ok()) {
    result.status = failed.WithContext("Load");
    return result;
  }
  if (!uncomputed.ok()) {
    result.status = uncomputed.WithContext("Load: checksum");
    return result;
  }
  if (result.layout_mismatch.size() > 8) {
    layout_problems += " and " + std::to_string(result.layout_mismatch.size() - 8) + " more";
  }
  std::sort(result.faulty.begin(), result.faulty.end());

  if (!result.misrouted.empty()) {
    // Named with the key each block's header holds: which two keys meta confused.
    std::string named;
    for (size_t m = 0; m < std::min<size_t>(result.misroutes.size(), 8); ++m) {
      const MisroutedReadEvent& e = result.misroutes[m];
      named += (m == 0 ? "" : "; ") + std::string("block ") + std::to_string(result.misrouted[m]) + " key '" + e.key +
               "' at location '" + e.location + "' holds the block of " + e.found;
    }
    if (result.misroutes.size() > 8) named += " and " + std::to_string(result.misroutes.size() - 8) + " more";
    result.status = Status(StatusCode::kInlineHeaderInvalid, "Load: misrouted read on storage '" + options_.storage +
                                                                 "': " + named + "; discard these buffers");
  } else if (!corrupt.ok()) {
    result.status = Status(StatusCode::kCorruption,
                           "Load: " + std::to_string(result.corrupt_header.size()) + " block(s) with a damaged inline "
                           "header on storage '" + options_.storage + "', first: " + corrupt.message() +
                           "; discard these buffers");
  } else if (!result.faulty.empty()) {
    result.status = Status::ChecksumMismatch("Load: data read back differs from its checksum for " +
                                             NameKeys(keys, result.faulty) + "; discard these buffers");
  } else if (!result.layout_mismatch.empty()) {
    // Not a ChecksumMismatch: the bytes may well be intact, but the caller would read them as
    // other tensors than were written.
    result.status = Status::InvalidArgument(std::string(kLayoutMismatchPrefix) + layout_problems +
                                            "; read these blocks with the writer's IOV layout");
  } else if (!result.missing.empty()) {
    std::string lost;
    if (!result.lost.empty()) {
      lost = " (" + std::to_string(result.lost.size()) + " of them listed by meta but lost from the store" +
             (options_.drop_lost_entries ? ": their index entries were dropped)" : ")");
    }
    result.status = Status::NotFound("Load: not cached on storage '" + options_.storage + "': " +
                                     NameKeys(keys, result.missing) + lost);
  }
  return result;
}

void TransferClient::ReconcileMisses(std::span<const std::string> keys, std::span<const size_t> which,
                                     std::span<const store::BlockId> ids, std::span<const uint8_t> headed,
                                     std::span<const size_t> missed, LoadResult* result) {
  if (missed.empty()) return;
  std::vector<store::BlockId> missed_ids;
  std::vector<uint8_t> missed_headed;
  for (size_t w : missed) {
    result->missing.push_back(which[w]);
    missed_ids.push_back(ids[w]);
    missed_headed.push_back(headed[w]);
  }
  // Only the store can say a block is gone rather than unreachable now (a read that failed over
  // to a path without the block also misses): anything short of kLost keeps its entry.
  Result<std::vector<store::BlockPresence>> presence = store_.Presence(missed_ids, missed_headed);
  if (!presence.ok() || presence->size() != missed.size()) {
    spdlog::warn("load: {} misses of blocks meta lists on storage '{}' stay listed: presence check failed: {}",
                 missed.size(), options_.storage, presence.ok() ? "wrong answer size" : presence.status().ToString());
    return;
  }
  std::vector<std::string> dropped;
  for (size_t m = 0; m < missed.size(); ++m) {
    if ((*presence)[m] != store::BlockPresence::kLost) continue;
    const size_t i = which[missed[m]];
    result->lost.push_back(i);
    dropped.push_back(keys[i]);
    spdlog::warn("key '{}': meta lists block {} on storage '{}', but the store no longer has it whole{}", keys[i],
                 missed_ids[m].Hex(), options_.storage,
                 options_.drop_lost_entries ? ": its index entry is dropped" : "");
  }
  std::sort(result->lost.begin(), result->lost.end());
  if (dropped.empty() || !options_.drop_lost_entries) return;
  if (Status s = meta_.Remove(dropped); !s.ok()) {
    spdlog::warn("dropping the index entries of {} lost blocks failed (they stay listed): {}", dropped.size(),
                 s.ToString());
  }
}

Result<TransferClient::ScrubReport> TransferClient::Scrub(std::span<const std::string> keys,
                                                          std::span<const uint64_t> iov_sizes, size_t batch_blocks) {
  if (batch_blocks == 0) return Status::InvalidArgument("Scrub: batch size must be > 0");
  std::vector<uint64_t> assumed(iov_sizes.begin(), iov_sizes.end());
  if (assumed.empty()) assumed.push_back(options_.block_size);
  uint64_t total = 0;
  for (uint64_t size : assumed) total += size;
  if (total != options_.block_size) {
    return Status::InvalidArgument("Scrub: the IOV sizes add up to " + std::to_string(total) +
                                   " bytes, the store's block size is " + std::to_string(options_.block_size));
  }
  ScrubReport report;
  // Aligned scratch buffers, so stores with direct I/O can read into them.
  std::vector<store::AlignedBuffer> scratch;
  for (size_t i = 0; i < std::min(batch_blocks, keys.size()); ++i) scratch.emplace_back(options_.block_size);
  for (size_t base = 0; base < keys.size(); base += batch_blocks) {
    const size_t n = std::min(batch_blocks, keys.size() - base);
    const std::span<const std::string> batch = keys.subspan(base, n);
    Result<std::vector<std::optional<meta::CacheLocation>>> locs = meta_.GetLocations(batch);
    if (!locs.ok()) return locs.status().WithContext("Scrub: GetLocations");
    if (locs->size() != n) return Status::Internal("Scrub: meta returned another number of locations than keys");
    // Each block is cut the way its writer cut it when the record says so; the assumed layout
    // is only for records without one. A stored layout that does not fit the block is read with
    // the assumed one and comes back as a layout mismatch (LoadAt names it).
    std::vector<BlockBuffers> views;
    std::vector<uint8_t> stored(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const std::optional<meta::CacheLocation>& loc = (*locs)[i];
      stored[i] = loc && loc->iov_layout.known() && loc->iov_layout.total_bytes() == options_.block_size;
      views.push_back(CutInto(scratch[i].span(), stored[i] ? loc->iov_layout.Sizes() : assumed));
    }
    LoadResult r = LoadAt(batch, views, *locs);
    const bool layout_status = r.status.code() == StatusCode::kInvalidArgument &&
                               r.status.message().starts_with(kLayoutMismatchPrefix);
    if (!r.status.ok() && r.status.code() != StatusCode::kChecksumMismatch && r.status.code() != StatusCode::kNotFound &&
        r.status.code() != StatusCode::kInlineHeaderInvalid && r.status.code() != StatusCode::kCorruption &&
        !layout_status) {
      return r.status;
    }
    report.blocks += n;
    for (size_t i : r.faulty) report.mismatched.push_back(batch[i]);
    for (size_t i : r.missing) report.missing.push_back(batch[i]);
    for (size_t i : r.lost) report.lost.push_back(batch[i]);
    for (size_t i : r.layout_mismatch) report.bad_layout.push_back(batch[i]);
    for (size_t i : r.misrouted) report.misrouted.push_back(batch[i]);
    for (size_t i : r.corrupt_header) report.corrupt_header.push_back(batch[i]);
    for (size_t i = 0; i < n; ++i) {
      const auto listed = [i](const std::vector<size_t>& list) {
        return std::find(list.begin(), list.end(), i) != list.end();
      };
      if (listed(r.missing) || listed(r.misrouted) || listed(r.corrupt_header)) continue;
      if (!r.verified[i]) {
        // Not compared: no checksum stored, or a stored layout that does not fit the block.
        if (!(*locs)[i] || !(*locs)[i]->checksum_present) ++report.unverified;
        continue;
      }
      ++(stored[i] ? report.with_stored_layout : report.with_assumed_layout);
      if (std::find(r.faulty.begin(), r.faulty.end(), i) == r.faulty.end()) {
        ++report.verified;
      } else if (!stored[i]) {
        ++report.mismatched_with_assumed_layout;
      }
    }
  }
  return report;
}

}  // namespace kvchaos::client
