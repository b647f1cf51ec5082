// TransferClient: moves KV-cache blocks between caller buffers and a block store, with end-to-end
// checksums kept in the meta service (read-write-data-integrity.md, plan A, closing its gaps).
//
//   Save(keys, blocks): StartWrite -> store Dump, and the checksums (CPU) computed while it runs ->
//                       FinishWrite, once both are done, with the checksums and each block's IOV
//                       layout. A failed Dump reports no checksums and commits nothing.
//   Load(keys, blocks): GetLocations -> one store Load per block, all in flight -> each block
//                       verified against the checksum meta returned as soon as its own read is
//                       done, while the others are still read -> ChecksumMismatch naming every
//                       faulty block. After a mismatch the caller must discard the buffers (they
//                       hold what was read). Nothing is returned before every block is verified.
//
// Overlap: the checksums run on a bounded pool (common/work_pool.h) of `checksum_threads` threads,
// the caller's included, so their cost hides behind the store's I/O instead of adding to it. Only
// crc64_full is overlapped with the Dump of a Save: crc32_xor_int64 reads a few bytes per IOV and
// may refuse an IOV layout, and caller checksums must match, before anything is written, so those
// are computed (still on the pool) first. The pool's threads, locks and waits go through
// kvchaos::Runtime (TransferClientOptions::runtime), so the simulator runs it too.
//
// Reconciling meta with the store: the index may list a block the store no longer has — lost in
// a power loss without durable commits, left empty or short, removed behind meta's back. The store
// reads such a block as a miss (NotFound), so Load reports it in `missing`; if the store then
// confirms it lost (Store::Presence: the file is missing or short where reads go first), it is
// also in `lost` and its index entry is dropped (meta Remove), so the index stops promising it and
// the next Save writes it again. The rule is "drop, only on the store's word": an I/O error, a
// timeout, a checksum mismatch (a bit flipped on the way may be transient), or a miss on a
// fallback path while the block's first path is unavailable never drops anything. What remains: a
// key removed and saved again by another client between the confirmation and the drop loses its
// new entry (a miss later, never wrong data).
//
// Both checksums bind the IOV layout, so meta keeps the layout each checksum was computed over
// (meta/iov_layout.h). When the caller's layout of a block differs from the stored one, Load does
// not call that a checksum mismatch: it verifies the bytes under the stored layout (a copy, cut
// the writer's way) and fails with InvalidArgument "layout mismatch: stored ..., given ..."
// (LoadResult::layout_mismatch), unless the bytes are damaged too (ChecksumMismatch wins). Scrub
// reads each block with its stored layout and assumes one only for records that have none.
//
// A block is a list of IOVs whose sizes add up to the store's block size; the IOVs are cut into the
// store's shards in order. Checksums are computed on the CPU from host buffers (the CUDA path in
// integrity/device_checksum.h is for device-resident IOVs); nothing is ever skipped silently: a
// block is left unverified only when meta holds no checksum for it (written by an old client or
// with meta checksums off), and LoadResult says which blocks were verified.
//
// Inline headers (plan B, docs/inline-header.md): when the storage's config has them on, Save
// writes each block's header (key, length, checksum, layout) after its data, in the same temp file
// and commit, and records the header version with the block in meta. Load reads and checks the
// header of every block whose record has one, before the block's checksum: a damaged header is
// Corruption, another key's header a misrouted read (InlineHeaderInvalid naming both keys, counted
// per storage and passed to on_misrouted), a header of another length a miss (a torn block).
// Records without a version are read as before, so a storage being upgraded holds both kinds.
//
// Every mismatch is counted per storage, logged once per block (key, storage, location, algorithm,
// expected and actual values, stage) and passed to the optional callback so an embedding service
// can publish an event: on a Load, as soon as that block is verified (on a checksum thread), one
// call at a time.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/client/meta_client.h"
#include "core/common/runtime.h"
#include "core/common/work_pool.h"
#include "core/integrity/checksum.h"
#include "core/integrity/verify.h"
#include "core/store/aligned_buffer.h"
#include "core/store/store.h"

namespace kvchaos::client {

// One block as the caller's IOVs (written from on Save, read into on Load).
using BlockBuffers = std::vector<std::span<std::byte>>;

struct ChecksumMismatchEvent {
  std::string key;
  std::string storage;
  std::string location;  // the block's place in the storage (posix: 32 hex block id)
  integrity::ChecksumAlgo algo = integrity::ChecksumAlgo::kUnspecified;
  integrity::VerifyStage stage = integrity::VerifyStage::kUnspecified;
  int64_t expected = 0;
  int64_t actual = 0;
};

// A read that got another block than its key's: meta's location for `key` holds a block whose
// inline header names `found` (the key, or its length and hash when too long to be stored).
struct MisroutedReadEvent {
  std::string key;
  std::string found;
  std::string storage;
  std::string location;
};

struct TransferClientOptions {
  std::string storage;                 // global_unique_name of the storage in meta
  // Bytes per block and per shard. 0: the store's (Store::Geometry), which is the one place they
  // should come from; a value given that differs from the store's is refused by Create.
  uint64_t block_size = 0;
  uint64_t shard_size = 0;
  // Re-read the locations after FinishWrite and compare the stored checksums with the ones sent
  // (stage META_ROUND_TRIP). Costs one meta round trip per Save.
  bool verify_meta_round_trip = false;
  // Drop the index entries of blocks the store confirms lost (see the file comment); false only
  // reports them in LoadResult::lost.
  bool drop_lost_entries = true;
  // Called once per faulty block, one call at a time, from the thread that verified it (the
  // caller's or a checksum thread). It must not call Save, Load or Scrub.
  std::function<void(const ChecksumMismatchEvent&)> on_mismatch;
  // Called once per misrouted read, like on_mismatch (serialised with it; same restrictions).
  std::function<void(const MisroutedReadEvent&)> on_misrouted;
  // Threads that compute checksums, the calling thread included (1: all on the caller, the store's
  // I/O still overlapped). 0: the store's concurrency (Store::Concurrency), and with the real
  // runtime at most the CPUs of the process's affinity mask (a simulated run must not depend on
  // the machine it runs on). At most kMaxChecksumThreads.
  size_t checksum_threads = 0;
  static constexpr size_t kMaxChecksumThreads = 256;
  // Time, threads and locks of the checksum pool (the simulator passes its own).
  Runtime* runtime = &Runtime::Real();

  // Bugs the simulator plants to prove its checkers catch them. Off in production; code only.
  struct TestingKnobs {
    bool skip_load_verification = false;  // Load returns blocks without comparing their checksums
    bool skip_inline_header_check = false;  // Load reads inline headers but never looks at them
  };
  TestingKnobs testing;
};

struct SaveResult {
  std::vector<uint8_t> written;    // per key: 1 = written now, 0 = was already cached
  std::vector<int64_t> checksums;  // per key (written ones) when meta checksums are on; else empty
};

struct LoadResult {
  // OK, InlineHeaderInvalid (a misrouted read), Corruption (a damaged inline header),
  // ChecksumMismatch, NotFound (a key not cached), or an I/O error, in that order of precedence.
  Status status;
  std::vector<size_t> faulty;    // blocks whose checksum differs (their buffers must be discarded)
  // One event per faulty block, in block order: what on_mismatch was told, kept with the call's
  // result (on_mismatch runs on whichever thread verified the block).
  std::vector<ChecksumMismatchEvent> mismatches;
  std::vector<size_t> missing;   // blocks not in the cache: no index entry, or the store missed them
  // Of `missing`: listed by meta, but the store confirms their block lost; entries dropped when
  // drop_lost_entries.
  std::vector<size_t> lost;
  // Of `missing`: their inline header says another data length (a torn or truncated block).
  std::vector<size_t> torn;
  // Blocks whose inline header names another key (never returned as good, never a mismatch), with
  // one event each in block order.
  std::vector<size_t> misrouted;
  std::vector<MisroutedReadEvent> misroutes;
  // Blocks whose inline header is damaged (wrong magic, version, or its own checksum).
  std::vector<size_t> corrupt_header;
  std::vector<uint8_t> verified;  // per block: 1 when a stored checksum was compared
  // Blocks whose stored IOV layout differs from the caller's (status InvalidArgument "layout
  // mismatch" when no block is faulty). Their bytes were checked under the stored layout where it
  // adds up to the block size (verified = 1 then); the caller cut them another way than the writer.
  std::vector<size_t> layout_mismatch;
};

class TransferClient {
 public:
  // Takes block and shard sizes from the store (InvalidConfig naming both numbers when options
  // give other ones), fetches the storage config and refuses what it cannot honour (the inline
  // header switch without a known version -> InlineHeaderInvalid, a version without the switch
  // and other integrity problems -> InvalidConfig), and bad
  // KVCM_CHECK_IOV_BYTE_SIZE / KVCM_CHECKSUM_STRICT_MODE values.
  static Result<std::unique_ptr<TransferClient>> Create(MetaClient& meta, store::Store& store,
                                                        TransferClientOptions options);
  // Joins the checksum threads; no Save, Load or Scrub may still run.
  ~TransferClient();

  // `caller_checksums`: when given (one per key), the computed checksums are compared with them
  // first (stage WRITE_INPUT) and nothing is written on a difference.
  Result<SaveResult> Save(std::span<const std::string> keys, std::span<const BlockBuffers> blocks,
                          const std::vector<int64_t>* caller_checksums = nullptr);
  Status Load(std::span<const std::string> keys, std::span<const BlockBuffers> blocks) {
    return LoadDetailed(keys, blocks).status;
  }
  LoadResult LoadDetailed(std::span<const std::string> keys, std::span<const BlockBuffers> blocks);

  // Scrub: re-reads the blocks of `keys` (batch by batch, into scratch buffers) and verifies them
  // against meta, as an operator's scrubber does. Both checksums depend on how a block is cut into
  // IOVs: each block is cut by the layout stored with its checksum; `iov_sizes` is assumed only for
  // records without one (written before layouts were stored; empty: one IOV spanning the block),
  // and their sum must be the block size. Mismatches are reported like any Load's (count, log,
  // callback). Lost blocks are reconciled as in Load. Fails only on errors other than mismatches,
  // layout problems and missing keys.
  struct ScrubReport {
    size_t blocks = 0;
    size_t verified = 0;                // compared with a stored checksum and equal
    size_t unverified = 0;              // loaded, but meta holds no checksum
    size_t with_stored_layout = 0;      // compared, cut by the layout stored with the checksum
    size_t with_assumed_layout = 0;     // compared, cut by `iov_sizes` (the record has no layout)
    // Of `mismatched`, those cut by the assumed layout: false alarms if `iov_sizes` is not the
    // writer's layout.
    size_t mismatched_with_assumed_layout = 0;
    std::vector<std::string> mismatched;
    std::vector<std::string> missing;
    std::vector<std::string> lost;  // of `missing`: meta listed them, the store lost their blocks
    // Keys whose stored layout cannot be the block's (it does not add up to the block size).
    std::vector<std::string> bad_layout;
    std::vector<std::string> misrouted;       // their block's inline header names another key
    std::vector<std::string> corrupt_header;  // their block's inline header is damaged
  };
  Result<ScrubReport> Scrub(std::span<const std::string> keys, std::span<const uint64_t> iov_sizes,
                            size_t batch_blocks = 64);

  // Mismatches seen so far, per storage.
  std::map<std::string, uint64_t> MismatchCounts() const;
  // Misrouted reads seen so far, per storage.
  std::map<std::string, uint64_t> MisroutedCounts() const;
  // What one block takes on the storage as of the config read at Create: block_size, plus the
  // inline header's region when the storage writes them.
  uint64_t stored_block_bytes() const;
  const meta::StorageConfig& storage_config() const { return config_; }
  // The sizes in use (the store's).
  uint64_t block_size() const { return options_.block_size; }
  uint64_t shard_size() const { return options_.shard_size; }
  // Threads that compute checksums, the caller's included (checksum_threads resolved).
  size_t checksum_threads() const { return pool_->threads() + 1; }

 private:
  TransferClient(MetaClient& meta, store::Store& store, TransferClientOptions options, meta::StorageConfig config,
                 size_t sample_width, size_t checksum_threads);
  Status CheckShapes(std::span<const std::string> keys, std::span<const BlockBuffers> blocks) const;
  // Load of blocks whose locations were already fetched.
  LoadResult LoadAt(std::span<const std::string> keys, std::span<const BlockBuffers> blocks,
                    const std::vector<std::optional<meta::CacheLocation>>& locs);
  // Store misses of blocks meta listed (`missed` indexes `which`, `ids` and `headed`: nonzero for
  // a block with an inline header): all go to `missing`; those the store confirms lost to `lost`,
  // their entries dropped.
  void ReconcileMisses(std::span<const std::string> keys, std::span<const size_t> which,
                       std::span<const store::BlockId> ids, std::span<const uint8_t> headed,
                       std::span<const size_t> missed, LoadResult* result);
  // Cuts each listed block's IOVs into shards of its store block.
  Result<store::TransferTask> MakeTask(std::span<const size_t> which, std::span<const store::BlockId> ids,
                                       std::span<const BlockBuffers> blocks) const;
  Result<int64_t> Compute(integrity::ChecksumAlgo algo, const BlockBuffers& block) const;
  // Checksums of the listed blocks into `sums` (per entry of `which`), on the pool: `batch` holds
  // the jobs, and once it is waited for, `errors` the failure of each block that had one.
  void StartChecksums(WorkPool::Batch& batch, integrity::ChecksumAlgo algo, std::span<const size_t> which,
                      std::span<const BlockBuffers> blocks, std::vector<int64_t>* sums,
                      std::vector<Status>* errors) const;
  void Report(const ChecksumMismatchEvent& event);
  void Report(const MisroutedReadEvent& event);
  // The inline header of each listed block (aligned, as direct I/O sends it), naming the checksum
  // in `sums` when there are any.
  std::vector<store::AlignedBuffer> MakeHeaders(std::span<const std::string> keys, std::span<const size_t> which,
                                                std::span<const BlockBuffers> blocks, std::span<const int64_t> sums,
                                                integrity::ChecksumAlgo algo) const;

  MetaClient& meta_;
  store::Store& store_;
  TransferClientOptions options_;
  meta::StorageConfig config_;
  size_t sample_width_;
  std::unique_ptr<WorkPool> pool_;
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> mismatches_;
  std::map<std::string, uint64_t> misrouted_;
  // Serialises the on_mismatch callbacks (a runtime Mutex: a callback may block).
  Mutex report_mu_;
};

}  // namespace kvchaos::client
