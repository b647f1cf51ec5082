// The simulated disk: storages in memory on virtual time, reached through the store's own seams
// (store::FileOps, store::AioOps), with the fault vocabulary of faultfs.
//
//  - SimStorage is one storage's file tree (directories of names, files of bytes) with the strict
//    POSIX power-loss rules that faultfs's drop_unsynced with dir_sync (and the store tests'
//    CrashFileOps) apply: a file's bytes survive a crash only as of its last fsync or fdatasync,
//    a name — created, or moved into a directory by rename — only once that directory was fsynced
//    after the change. Crash() puts the tree back to that state; files open at the crash answer
//    ESTALE from then on.
//  - SimDisk holds the storages and the mounts: a mount is a path ("/sim/p1") that reaches one
//    storage, as a mount point of a shared file system does; several mounts may reach the same
//    storage. Each mount has its own faultfs::RuleEngine (the same rules, parser and damage as a
//    faultfs mount: errno, latency, hang until released, bit flips on read, short, torn, lost and
//    misdirected writes, misdirected reads, bad ranges), running on the simulator's runtime, and a
//    latency model for calls no rule delays (base + bytes / bandwidth, drawn from the disk's Rng
//    stream).
//  - SimFileOps is store::FileOps over the disk: a call sleeps its latency on the calling thread
//    (a hang blocks it until released), then takes effect. SimAioOps is store::AioOps: io_submit
//    queues the iocbs for the context's kernel threads (simulated threads of the submitting host),
//    which run each through SimFileOps — so a hung mount holds a kernel thread, never the caller —
//    and io_getevents waits for their completions on virtual time.
// Every fault hit is a trace event; every draw comes from the seed (the rule engines' streams and
// the disk's own), so a seed replays the same I/O.
#pragma once

#include <libaio.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/rng.h"
#include "core/common/runtime.h"
#include "core/store/aio_engine.h"
#include "core/store/file_ops.h"
#include "faultfs/bad_ranges.h"
#include "faultfs/misdirected_reads.h"
#include "faultfs/rule_engine.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

class SimStorage {
 public:
  explicit SimStorage(uint64_t device) : device_(device) {}

  uint64_t device() const { return device_; }
  // Paths are relative to the storage's root ("", "0a3", "0a3/<hex>.tmp"). Each returns 0 or an
  // errno, like the system call it stands for.
  int Lookup(std::string_view path, uint64_t* inode, bool* is_dir) const;
  int CreateFile(std::string_view path, uint64_t* inode);
  int MakeDir(std::string_view path);
  int RemoveDir(std::string_view path);
  int Unlink(std::string_view path);
  int Rename(std::string_view from, std::string_view to);
  // Reads at most `len` bytes at `offset` (fewer at the end of the file); -errno on failure.
  int64_t Read(uint64_t inode, uint64_t offset, std::span<uint8_t> out) const;
  int Write(uint64_t inode, uint64_t offset, std::span<const uint8_t> data);
  int Truncate(uint64_t inode, uint64_t size);
  int Reserve(uint64_t inode, uint64_t offset, uint64_t length);  // fallocate mode 0
  int Size(uint64_t inode, uint64_t* size) const;
  // Makes a file's bytes durable, or a directory's names.
  int Sync(uint64_t inode);
  // An open file descriptor's hold on an inode (SimFileOps takes one per open, drops it at
  // close): an unlinked file stays readable while it is open, as on POSIX.
  void Hold(uint64_t inode);
  void Release(uint64_t inode);
  // Power loss: everything not made durable is gone (see the top of the file).
  void Crash();
  bool Exists(uint64_t inode) const { return nodes_.contains(inode); }
  // Files that exist: named now, named durably (a crash would bring them back) or held open.
  // An inode none of those reach is freed at once (a run writes tens of thousands of temp files
  // and block versions; keeping them made every crash copy them and the tree grow for ever).
  size_t file_count() const;
  // Every file's path now (names not yet durable included), depth first: "0a3/<hex>", ...
  std::vector<std::string> FilePaths() const;
  // The same with each file's size (what a misdirected read chooses its source from).
  std::vector<faultfs::FileEntry> FileEntries() const;

 private:
  // Names are hashed (every open walks a path through directories of thousands of block files);
  // nothing shows their order but FilePaths, which sorts them.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };
  template <typename Value>
  using NameMap = std::unordered_map<std::string, Value, NameHash, std::equal_to<>>;
  using Entries = NameMap<uint64_t>;
  // A file's bytes, shared by `data` and `synced` until one changes: a block file is written,
  // synced and from then on only read, so neither its sync nor a crash that keeps it copies it.
  // Null reads as empty.
  using Bytes = std::shared_ptr<std::vector<uint8_t>>;
  struct Node {
    bool dir = false;
    Bytes data;    // a file's bytes now
    Bytes synced;  // ... as of its last sync (what a crash leaves)
    Entries entries;              // a directory's names now
    Entries durable;              // ... as of its last sync
    // Names changed since the last sync, each with its entry now (none: removed). A sync applies
    // just these to `durable`, so syncing a large directory costs its changes, not its size.
    NameMap<std::optional<uint64_t>> unsynced;
    // What keeps the inode alive: names in `entries` of directories, names in their `durable`,
    // open descriptors. All zero: nothing can reach it, not even a crash.
    uint32_t links = 0;
    uint32_t durable_links = 0;
    uint32_t opens = 0;
  };
  // Every change to a directory's names goes through these two, which note the name for its sync
  // and count the inode's links. EraseEntry frees nothing: the caller calls Collect once the
  // operation is done (a rename unlinks the inode it is about to link again).
  void AddEntry(Node& dir, std::string_view name, uint64_t inode);
  void EraseEntry(Node& dir, Entries::iterator it);
  // Frees `inode` when nothing keeps it (see Node), and what a freed directory's durable names
  // kept. The root is never freed.
  void Collect(uint64_t inode);
  // The directory holding `path`'s last component, and that component; ENOENT/ENOTDIR otherwise.
  int Parent(std::string_view path, Node** dir, std::string_view* name);
  int ParentConst(std::string_view path, const Node** dir, std::string_view* name) const;
  // A file's bytes now, to change: its own copy once they are shared with its synced state.
  static std::vector<uint8_t>& MutableData(Node& node);
  static size_t DataSize(const Node& node) { return node.data ? node.data->size() : 0; }
  Node* Get(uint64_t inode);
  const Node* Get(uint64_t inode) const;

  const uint64_t device_;
  uint64_t next_inode_ = 2;
  // 1: the root, always durable. Hashed (every call looks an inode up); nothing iterates it in an
  // order that shows: Crash walks from the root, file_count only counts.
  std::unordered_map<uint64_t, Node> nodes_{{1, Node{.dir = true}}};
};

// How long a call takes when no rule delays it: base + size / bandwidth, with jitter.
struct DiskLatency {
  int64_t metadata_ns = 20'000;   // open, stat, rename, mkdir, unlink, close
  int64_t io_base_ns = 50'000;    // a read or write, plus its bytes at the bandwidth
  int64_t sync_ns = 200'000;      // fsync, fdatasync
  double bytes_per_ns = 2.0;      // 2 GB/s
  double jitter = 0.2;            // each call's time is drawn in [t, t * (1 + jitter)]
};

class SimDisk {
 public:
  SimDisk(SimRuntime& runtime, Rng rng, DiskLatency latency = {});

  // A storage and the mounts that reach it. Mount paths are absolute and distinct.
  SimStorage& AddStorage(std::string name);
  void AddMount(std::string path, SimStorage& storage);
  // The rules of the mount at `path` (faultfs's engine on this runtime).
  faultfs::RuleEngine& rules(std::string_view mount_path);
  SimStorage* storage(std::string_view name);
  std::vector<std::string> mount_paths() const;

  struct Mount {
    std::string path;
    SimStorage* storage = nullptr;
    std::unique_ptr<faultfs::RuleEngine> rules;
    faultfs::BadRanges bad_ranges;
    uint64_t calls = 0;  // calls that reached the mount (for checkers: did a fault see traffic)
    uint64_t misdirected_reads = 0;  // reads served from another file's bytes (misdirected_read)
  };
  // The mount a path is under and the path inside it; nullptr when none.
  Mount* Resolve(std::string_view path, std::string* inside);
  // The mount at exactly `path`; nullptr when none.
  Mount* mount(std::string_view path);
  Duration DrawLatency(int64_t ns);
  SimRuntime& runtime() { return runtime_; }
  const DiskLatency& latency() const { return latency_; }

 private:
  SimRuntime& runtime_;
  Rng rng_;
  const DiskLatency latency_;
  std::map<std::string, std::unique_ptr<SimStorage>, std::less<>> storages_;
  std::vector<std::unique_ptr<Mount>> mounts_;
};

class SimFileOps final : public store::FileOps {
 public:
  explicit SimFileOps(SimDisk& disk) : disk_(disk) {}

  int Open(const std::string& path, int flags, mode_t mode) override;
  ssize_t Pwrite(int fd, const void* buf, size_t len, off_t offset) override;
  ssize_t Pread(int fd, void* buf, size_t len, off_t offset) override;
  ssize_t Pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) override;
  ssize_t Preadv(int fd, const struct iovec* iov, int iovcnt, off_t offset) override;
  int Fsync(int fd) override;
  int Fdatasync(int fd) override { return Fsync(fd); }
  int Fallocate(int fd, off_t offset, off_t len) override;
  int Close(int fd) override;
  int Unlink(const std::string& path) override;
  int Rename(const std::string& from, const std::string& to) override;
  int Mkdir(const std::string& path, mode_t mode) override;
  int Rmdir(const std::string& path) override;
  int Stat(const std::string& path, bool* is_dir, off_t* size) override;
  int FileId(const std::string& path, uint64_t* device, uint64_t* inode) override;

  size_t open_files() const { return fds_.size(); }

 private:
  struct OpenFile {
    SimDisk::Mount* mount = nullptr;
    std::string inside;  // the path inside the mount, for rules
    uint64_t inode = 0;
    bool dir = false;
    bool direct = false;
  };
  // Runs the rules and the latency of a call; returns an errno to fail it with (0: go on) and
  // leaves a data action in *action.
  int Enter(SimDisk::Mount& mount, faultfs::Op op, std::string_view inside, uint64_t offset, uint64_t size,
            int64_t latency_ns, std::optional<faultfs::Hit>* action);
  // Path calls: resolve, rules, latency; *inside is the path in the mount.
  int EnterPath(const std::string& path, faultfs::Op op, SimDisk::Mount** mount, std::string* inside);
  OpenFile* File(int fd);
  ssize_t WriteAt(int fd, std::span<const uint8_t> data, off_t offset);
  ssize_t ReadAt(int fd, std::span<uint8_t> out, off_t offset);
  // A misdirected_read hit: the bytes at `offset` of another file of the storage (or its own
  // when there is none), chosen from the hit's stream; the choice is a trace event.
  ssize_t MisdirectedRead(const OpenFile& f, std::span<uint8_t> out, uint64_t offset, faultfs::Hit& hit);
  static int Fail(int err);

  SimDisk& disk_;
  int next_fd_ = 1000;
  std::map<int, OpenFile> fds_;
};

class SimAioOps final : public store::AioOps {
 public:
  SimAioOps(SimRuntime& runtime, SimFileOps& files);
  ~SimAioOps() override;

  int Setup(int max_events, io_context_t* ctx) override;
  int Submit(io_context_t ctx, long count, struct iocb** iocbs) override;
  int GetEvents(io_context_t ctx, long min_nr, long max_nr, struct io_event* events, struct timespec* timeout) override;
  int Destroy(io_context_t ctx) override;

 private:
  struct Context;
  void KernelLoop(Context* context);
  Context* Find(io_context_t ctx);

  SimRuntime& runtime_;
  SimFileOps& files_;
  std::map<uint64_t, std::unique_ptr<Context>> contexts_;
  uint64_t next_context_ = 1;
};

}  // namespace kvchaos::sim
