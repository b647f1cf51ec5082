// The op handlers of faultfs: a low-level passthrough in the manner of libfuse's
// passthrough_hp.cc, with the rule engine consulted on every call. Handlers keep to one shape:
// start a CallTimer, ask Inject() (which sleeps latency and hangs outside any lock and returns
// an errno for an errno hit), do the source call, reply, count.
#include "faultfs/passthrough.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "faultfs/data_faults.h"
#include "faultfs/misdirected_reads.h"
#include "faultfs/worker_pool.h"

namespace kvchaos::faultfs {

Result<CacheMode> CacheModeFromName(std::string_view name) {
  if (name == "targeted") return CacheMode::kTargeted;
  if (name == "none") return CacheMode::kNone;
  if (name == "always") return CacheMode::kAlways;
  return Status::InvalidArgument("unknown cache mode '" + std::string(name) + "' (known: targeted, none, always)");
}

std::string_view CacheModeName(CacheMode mode) {
  switch (mode) {
    case CacheMode::kTargeted: return "targeted";
    case CacheMode::kNone: return "none";
    case CacheMode::kAlways: return "always";
  }
  return "?";
}

namespace {

// FUSE_BUFVEC_INIT(size) without the macro's C99 compound literal (clang -Wpedantic refuses it in
// C++): one buffer of `size` bytes, no memory or fd yet.
fuse_bufvec OneBuffer(size_t size) {
  fuse_bufvec v{};
  v.count = 1;
  v.buf[0].size = size;
  v.buf[0].flags = static_cast<fuse_buf_flags>(0);
  v.buf[0].mem = nullptr;
  v.buf[0].fd = -1;
  v.buf[0].pos = 0;
  return v;
}

FaultFs& Fs(fuse_req_t req) { return *static_cast<FaultFs*>(fuse_req_userdata(req)); }

uint64_t FileKey(const Inode& inode) {
  return Mix64(static_cast<uint64_t>(inode.src_dev) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(inode.src_ino));
}

// An open file of the mount, kept in fi->fh as (fd << 1) | direct: a plain value, so no handle
// object is freed by release while another worker thread might still look at it.
struct FileHandle {
  int fd = -1;
  bool direct = false;  // the source fd has O_DIRECT: buffers must be aligned
};
FileHandle Fh(const fuse_file_info* fi) {
  return FileHandle{static_cast<int>(fi->fh >> 1), (fi->fh & 1) != 0};
}
uint64_t EncodeFh(int fd, bool direct) { return (static_cast<uint64_t>(fd) << 1) | (direct ? 1 : 0); }

struct DirHandle {
  std::mutex mu;  // readdir calls of one handle come on any worker thread
  DIR* dp = nullptr;
  off_t offset = 0;
  dirent* entry = nullptr;
};

// Page-aligned per-thread bounce buffer, for O_DIRECT source files and for faulted data.
uint8_t* AlignedBuffer(size_t size) {
  struct Buf {
    uint8_t* p = nullptr;
    size_t cap = 0;
    ~Buf() { std::free(p); }
  };
  thread_local Buf buf;
  if (buf.cap < size) {
    std::free(buf.p);
    buf.p = nullptr;
    buf.cap = 0;
    void* p = nullptr;
    const size_t cap = (size + 4095) & ~size_t{4095};
    if (posix_memalign(&p, 4096, cap) != 0) return nullptr;
    buf.p = static_cast<uint8_t*>(p);
    buf.cap = cap;
  }
  return buf.p;
}

// Times a call and counts it in the engine's per-op stats when it ends.
class CallTimer {
 public:
  CallTimer(FaultFs& fs, Op op) : fs_(fs), op_(op), start_(std::chrono::steady_clock::now()) {}
  void Done(int err) {
    fs_.engine().CountOp(op_, err, std::chrono::steady_clock::now() - start_);
    WorkerPool::BeforeReply();
  }

 private:
  FaultFs& fs_;
  Op op_;
  std::chrono::steady_clock::time_point start_;
};

// Runs the rules for `call`: sleeps latency hits, blocks on hang hits, and returns the errno of
// an errno hit (0 otherwise). Data actions are left in *plan for the caller.
int Inject(FaultFs& fs, const CallInfo& call, CallPlan* plan) {
  *plan = fs.engine().Plan(call);
  if (plan->empty()) return 0;
  if (!plan->delays.empty()) WorkerPool::MayBlock();  // a sleep or hang must not hold the queue
  fs.engine().RunDelays(*plan, call);
  if (plan->action && plan->action->state->rule.action == ActionKind::kErrno) {
    const int err = plan->action->state->rule.err;
    fs.engine().LogFault(call, *plan->action, {{"errno", ErrnoName(err)}});
    return err;
  }
  return 0;
}

// Checks a call on inode `ino` (optionally its child `name`) against the rules; 0 = go on.
int Check(FaultFs& fs, Op op, Inode& inode, const char* name = nullptr) {
  if (!fs.engine().Active()) return 0;
  const std::string path = name ? fs.ChildPath(inode, name) : fs.PathOf(inode);
  CallPlan plan;
  return Inject(fs, CallInfo{op, path}, &plan);
}

void ReplyErr(fuse_req_t req, CallTimer& timer, int err) {
  timer.Done(err);
  fuse_reply_err(req, err);
}

// The kernel stops sending fsync, flush, fallocate and xattr calls after one ENOSYS.
int NeverEnosys(int err) { return err == ENOSYS ? EOPNOTSUPP : err; }

std::string ProcPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// ---- lookup and inode lifetime ----

// The largest request that libfuse can still splice, or 0 when full 1 MiB requests fit.
//
// libfuse moves a reply through a per-thread pipe only when the pipe holds the whole message
// plus three pages of slack (fuse_send_data_iov), and receives by splice only when it holds
// max_write plus a 4 KiB header; otherwise it silently falls back to a malloc'ed bounce buffer
// per request (a fresh 1 MiB mmap, page faults and munmap every call). Pipes grow to
// /proc/sys/fs/pipe-max-size (1 MiB by default) without CAP_SYS_RESOURCE, which containers
// usually lack, so 1 MiB requests never splice there. Requests of pipe size - 16 KiB do.
uint32_t SpliceFitMaxWrite() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return 0;
  constexpr int kWanted = (1 << 20) + (16 << 10);
  const bool fits = fcntl(fds[0], F_SETPIPE_SZ, kWanted) >= kWanted;
  int max_size = 0;
  if (!fits) {
    // The size a pipe can reach: pipe-max-size, as the kernel rounds it.
    for (int size = 1 << 20; size >= (64 << 10) && max_size == 0; size /= 2) {
      if (fcntl(fds[0], F_SETPIPE_SZ, size) >= size) max_size = size;
    }
  }
  close(fds[0]);
  close(fds[1]);
  if (fits || max_size == 0) return 0;
  return static_cast<uint32_t>(max_size - (16 << 10));
}

void OpInit(void* userdata, fuse_conn_info* conn) {
  auto* fs = static_cast<FaultFs*>(userdata);
  if (fs->options().splice) {
    if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
    if (conn->capable & FUSE_CAP_SPLICE_MOVE) conn->want |= FUSE_CAP_SPLICE_MOVE;
    // Receiving by splice costs a splice and a read per request, and saves a copy only for writes
    // from the page cache (the pipe then holds references to its pages); with direct I/O the
    // kernel copies the caller's buffer into the pipe anyway. In `none` every file is direct.
    if (fs->options().cache != CacheMode::kNone && (conn->capable & FUSE_CAP_SPLICE_READ)) {
      conn->want |= FUSE_CAP_SPLICE_READ;
    } else {
      conn->want &= ~FUSE_CAP_SPLICE_READ;
    }
    // libfuse derives the kernel's max_pages from max_write, so this caps reads too.
    if (const uint32_t fit = SpliceFitMaxWrite(); fit != 0 && fit < conn->max_write) conn->max_write = fit;
  } else {
    conn->want &= ~(FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE | FUSE_CAP_SPLICE_READ);
  }
  if (fs->options().cache == CacheMode::kAlways && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) {
    conn->want |= FUSE_CAP_WRITEBACK_CACHE;
  } else {
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  }
  if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
  if (conn->capable & FUSE_CAP_ASYNC_DIO) conn->want |= FUSE_CAP_ASYNC_DIO;
  conn->max_readahead = 1u << 20;
  spdlog::info("faultfs: requests up to {} KiB, splice {}", conn->max_write >> 10,
               (conn->want & FUSE_CAP_SPLICE_WRITE) ? "on" : "off");
}

void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kLookup);
  Inode& dir = fs.Get(parent);
  const bool active = fs.engine().Active();
  const std::string path = active ? fs.ChildPath(dir, name) : std::string();
  if (active) {
    CallPlan plan;
    if (int err = Inject(fs, CallInfo{Op::kLookup, path}, &plan)) return ReplyErr(req, timer, err);
  }
  fuse_entry_param e{};
  const int err = fs.Lookup(dir, name, active ? path : fs.ChildPath(dir, name), &e);
  if (err == ENOENT && fs.options().cache == CacheMode::kAlways) {
    // A negative entry the kernel may cache. Only in `always`: in the other modes a file created
    // through another mount of the same source must be visible at once.
    e.ino = 0;
    e.entry_timeout = fs.attr_timeout();
    timer.Done(0);
    fuse_reply_entry(req, &e);
    return;
  }
  if (err != 0) return ReplyErr(req, timer, err);
  timer.Done(0);
  fuse_reply_entry(req, &e);
}

void OpForget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  Fs(req).Forget(ino, nlookup);
  fuse_reply_none(req);
}

void OpForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  FaultFs& fs = Fs(req);
  for (size_t i = 0; i < count; ++i) fs.Forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  (void)fi;
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kGetattr);
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kGetattr, inode)) return ReplyErr(req, timer, err);
  struct stat st {};
  if (fstatat(inode.fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return ReplyErr(req, timer, errno);
  timer.Done(0);
  fuse_reply_attr(req, &st, fs.attr_timeout());
}

void OpSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int valid, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kSetattr);
  WorkerPool::MayBlock();  // truncate can be slow on a real disk
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kSetattr, inode)) return ReplyErr(req, timer, err);
  const std::string proc = ProcPath(inode.fd);
  const int ffd = fi ? Fh(fi).fd : -1;
  int res = 0;
  if (valid & FUSE_SET_ATTR_MODE) {
    res = ffd >= 0 ? fchmod(ffd, attr->st_mode) : chmod(proc.c_str(), attr->st_mode);
    if (res != 0) return ReplyErr(req, timer, errno);
  }
  if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    const uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : static_cast<uid_t>(-1);
    const gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : static_cast<gid_t>(-1);
    if (fchownat(inode.fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return ReplyErr(req, timer, errno);
  }
  if (valid & FUSE_SET_ATTR_SIZE) {
    res = ffd >= 0 ? ftruncate(ffd, attr->st_size) : truncate(proc.c_str(), attr->st_size);
    if (res != 0) return ReplyErr(req, timer, errno);
  }
  if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    timespec tv[2];
    tv[0].tv_sec = 0;
    tv[1].tv_sec = 0;
    tv[0].tv_nsec = UTIME_OMIT;
    tv[1].tv_nsec = UTIME_OMIT;
    if (valid & FUSE_SET_ATTR_ATIME_NOW) {
      tv[0].tv_nsec = UTIME_NOW;
    } else if (valid & FUSE_SET_ATTR_ATIME) {
      tv[0] = attr->st_atim;
    }
    if (valid & FUSE_SET_ATTR_MTIME_NOW) {
      tv[1].tv_nsec = UTIME_NOW;
    } else if (valid & FUSE_SET_ATTR_MTIME) {
      tv[1] = attr->st_mtim;
    }
    res = ffd >= 0 ? futimens(ffd, tv) : utimensat(AT_FDCWD, proc.c_str(), tv, 0);
    if (res != 0) return ReplyErr(req, timer, errno);
  }
  struct stat st {};
  if (fstatat(inode.fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return ReplyErr(req, timer, errno);
  timer.Done(0);
  fuse_reply_attr(req, &st, fs.attr_timeout());
}

void OpReadlink(fuse_req_t req, fuse_ino_t ino) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kReadlink);
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kReadlink, inode)) return ReplyErr(req, timer, err);
  std::vector<char> buf(PATH_MAX + 1);
  const ssize_t n = readlinkat(inode.fd, "", buf.data(), buf.size());
  if (n < 0) return ReplyErr(req, timer, errno);
  if (static_cast<size_t>(n) >= buf.size()) return ReplyErr(req, timer, ENAMETOOLONG);
  buf[static_cast<size_t>(n)] = '\0';
  timer.Done(0);
  fuse_reply_readlink(req, buf.data());
}

// mknod, mkdir and symlink: make the node, then answer with its entry.
void MakeNode(fuse_req_t req, fuse_ino_t parent, const char* name, Op op, mode_t mode, dev_t rdev,
              const char* link) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, op);
  WorkerPool::MayBlock();  // directory changes may wait for a journal
  Inode& dir = fs.Get(parent);
  const std::string path = fs.ChildPath(dir, name);
  CallPlan plan;
  if (int err = Inject(fs, CallInfo{op, path}, &plan)) return ReplyErr(req, timer, err);
  int res = 0;
  if (op == Op::kMkdir) {
    res = mkdirat(dir.fd, name, mode);
  } else if (op == Op::kSymlink) {
    res = symlinkat(link, dir.fd, name);
  } else {
    res = mknodat(dir.fd, name, mode, rdev);
  }
  if (res != 0) return ReplyErr(req, timer, errno);
  fuse_entry_param e{};
  if (int err = fs.Lookup(dir, name, path, &e)) return ReplyErr(req, timer, err);
  timer.Done(0);
  fuse_reply_entry(req, &e);
}

void OpMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  MakeNode(req, parent, name, Op::kMknod, mode, rdev, nullptr);
}
void OpMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  MakeNode(req, parent, name, Op::kMkdir, S_IFDIR | mode, 0, nullptr);
}
void OpSymlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
  MakeNode(req, parent, name, Op::kSymlink, S_IFLNK, 0, link);
}

void OpLink(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char* name) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kLink);
  Inode& inode = fs.Get(ino);
  Inode& dir = fs.Get(parent);
  const std::string path = fs.ChildPath(dir, name);
  CallPlan plan;
  if (int err = Inject(fs, CallInfo{Op::kLink, path}, &plan)) return ReplyErr(req, timer, err);
  if (linkat(AT_FDCWD, ProcPath(inode.fd).c_str(), dir.fd, name, AT_SYMLINK_FOLLOW) != 0) {
    return ReplyErr(req, timer, errno);
  }
  fuse_entry_param e{};
  if (int err = fs.Lookup(dir, name, path, &e)) return ReplyErr(req, timer, err);
  timer.Done(0);
  fuse_reply_entry(req, &e);
}

void RemoveNode(fuse_req_t req, fuse_ino_t parent, const char* name, Op op) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, op);
  WorkerPool::MayBlock();
  Inode& dir = fs.Get(parent);
  if (int err = Check(fs, op, dir, name)) return ReplyErr(req, timer, err);
  if (unlinkat(dir.fd, name, op == Op::kRmdir ? AT_REMOVEDIR : 0) != 0) return ReplyErr(req, timer, errno);
  if (fs.unsynced().following_names()) fs.unsynced().Unlinked(fs.ChildPath(dir, name));
  timer.Done(0);
  fuse_reply_err(req, 0);
}
void OpUnlink(fuse_req_t req, fuse_ino_t parent, const char* name) { RemoveNode(req, parent, name, Op::kUnlink); }
void OpRmdir(fuse_req_t req, fuse_ino_t parent, const char* name) { RemoveNode(req, parent, name, Op::kRmdir); }

void OpRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent, const char* newname,
              unsigned int flags) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kRename);
  WorkerPool::MayBlock();
  Inode& dir = fs.Get(parent);
  Inode& newdir = fs.Get(newparent);
  const std::string old_path = fs.ChildPath(dir, name);
  const std::string new_path = fs.ChildPath(newdir, newname);
  CallPlan plan;
  if (int err = Inject(fs, CallInfo{Op::kRename, old_path}, &plan)) return ReplyErr(req, timer, err);
  if (renameat2(dir.fd, name, newdir.fd, newname, flags) != 0) return ReplyErr(req, timer, errno);
  fs.Renamed(old_path, new_path, (flags & RENAME_EXCHANGE) != 0);
  if (fs.unsynced().following_names()) {
    fs.unsynced().Renamed(old_path, new_path, newparent, (flags & RENAME_EXCHANGE) != 0);
  }
  timer.Done(0);
  fuse_reply_err(req, 0);
}

// ---- files ----

// Whether an open of `path` should bypass the page cache so that faults reach the application.
bool WantDirectIo(FaultFs& fs, const std::string& path, int flags) {
  if (flags & O_DIRECT) return true;
  switch (fs.options().cache) {
    case CacheMode::kNone: return true;
    case CacheMode::kAlways: return false;
    case CacheMode::kTargeted: return fs.engine().AnyRuleMatchesPath(path);
  }
  return false;
}

int AdjustOpenFlags(FaultFs& fs, int flags) {
  flags &= ~O_NOFOLLOW;
  if (fs.options().cache == CacheMode::kAlways) {
    // With the writeback cache the kernel reads pages of write-only files and handles O_APPEND.
    if ((flags & O_ACCMODE) == O_WRONLY) flags = (flags & ~O_ACCMODE) | O_RDWR;
    flags &= ~O_APPEND;
  }
  return flags;
}

void SetupOpen(FaultFs& fs, fuse_file_info* fi, int fd, const std::string& path) {
  fi->fh = EncodeFh(fd, (fi->flags & O_DIRECT) != 0);
  fi->direct_io = WantDirectIo(fs, path, fi->flags) ? 1 : 0;
  fi->keep_cache = fs.options().cache == CacheMode::kAlways ? 1 : 0;
}

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kOpen);
  Inode& inode = fs.Get(ino);
  const std::string path = fs.PathOf(inode);
  CallPlan plan;
  if (int err = Inject(fs, CallInfo{Op::kOpen, path}, &plan)) return ReplyErr(req, timer, err);
  const int fd = openat(fs.proc_self_fd(), std::to_string(inode.fd).c_str(), AdjustOpenFlags(fs, fi->flags));
  if (fd < 0) return ReplyErr(req, timer, errno);
  SetupOpen(fs, fi, fd, path);
  timer.Done(0);
  if (fuse_reply_open(req, fi) != 0) {
    // The opener was interrupted: nobody will release this handle.
    close(fd);
  }
}

void OpCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kCreate);
  WorkerPool::MayBlock();
  Inode& dir = fs.Get(parent);
  const std::string path = fs.ChildPath(dir, name);
  CallPlan plan;
  if (int err = Inject(fs, CallInfo{Op::kCreate, path}, &plan)) return ReplyErr(req, timer, err);
  const int fd = openat(dir.fd, name, AdjustOpenFlags(fs, fi->flags) | O_CREAT, mode);
  if (fd < 0) return ReplyErr(req, timer, errno);
  fuse_entry_param e{};
  if (int err = fs.Lookup(dir, name, path, &e)) {
    close(fd);
    return ReplyErr(req, timer, err);
  }
  if (plan.track_unsynced) fs.unsynced().Created(path, FileKey(fs.Get(e.ino)), parent, plan.need_dir_sync);
  SetupOpen(fs, fi, fd, path);
  timer.Done(0);
  if (fuse_reply_create(req, &e, fi) != 0) {
    close(fd);
  }
}

// Reads into an aligned buffer (what O_DIRECT source files need and what data faults act on).
ssize_t ReadToBuffer(const FileHandle& fh, uint8_t* buf, size_t size, off_t off) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fh.fd, buf + done, size - done, off + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
    if (fh.direct) break;  // a short direct read means EOF or an unaligned tail
  }
  return static_cast<ssize_t>(done);
}

constexpr size_t kMinSpliceRead = 8192;

// A misdirected read: the bytes at the call's offset of another file of SOURCE (chosen by
// misdirected_reads.h among the rule's `source` files); with no such file the read is served
// from its own file, and the log says so.
void MisdirectedRead(FaultFs& fs, fuse_req_t req, CallTimer& timer, const FileHandle& fh, const CallInfo& call,
                     Hit& hit) {
  WorkerPool::MayBlock();  // it lists and opens files of SOURCE
  struct stat own {};
  if (fstat(fh.fd, &own) != 0) return ReplyErr(req, timer, errno);
  const uint64_t own_size = static_cast<uint64_t>(own.st_size);
  const uint64_t needed_end = std::min(call.offset + call.size, std::max(own_size, call.offset));
  std::optional<std::string> source =
      PickMisdirectSource(hit.state->rule, call.path, needed_end, ListFiles(fs.root_fd()), hit.rng);
  int fd = fh.fd;
  if (source) {
    fd = openat(fs.root_fd(), source->c_str(), O_RDONLY | O_CLOEXEC | (fh.direct ? O_DIRECT : 0));
    if (fd < 0) source.reset();  // removed since it was listed: serve the read's own bytes
  }
  if (!source) fd = fh.fd;
  uint8_t* data = AlignedBuffer(call.size);
  if (data == nullptr) {
    if (fd != fh.fd) close(fd);
    return ReplyErr(req, timer, ENOMEM);
  }
  const ssize_t n = ReadToBuffer(FileHandle{fd, fh.direct}, data, call.size, static_cast<off_t>(call.offset));
  const int err = n < 0 ? errno : 0;
  if (fd != fh.fd) close(fd);
  if (n < 0) return ReplyErr(req, timer, err);
  nlohmann::json detail = {{"returned", n}};
  detail["source"] = source ? nlohmann::json(*source) : nlohmann::json(nullptr);
  fs.engine().LogFault(call, hit, std::move(detail));
  timer.Done(0);
  fuse_reply_buf(req, reinterpret_cast<const char*>(data), static_cast<size_t>(n));
}

void OpRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kRead);
  const FileHandle fh = Fh(fi);
  CallPlan plan;
  std::string path;
  CallInfo call{Op::kRead, {}, static_cast<uint64_t>(off), size};
  const bool active = fs.engine().Active();
  const bool sticky = !fs.bad_ranges().empty();
  if (active || sticky) {
    Inode& inode = fs.Get(ino);
    path = fs.PathOf(inode);
    call.path = path;
    if (active) {
      if (int err = Inject(fs, call, &plan)) return ReplyErr(req, timer, err);
    }
    if (sticky) {
      if (auto rule = fs.bad_ranges().Overlapping(FileKey(inode), call.offset, size)) {
        fs.engine().LogEvent({{"op", "read"}, {"path", path}, {"offset", call.offset}, {"size", size},
                              {"rule", *rule}, {"action", "bad_range"}, {"sticky", true}, {"errno", "EIO"}});
        return ReplyErr(req, timer, EIO);
      }
    }
    if (plan.action && plan.action->state->rule.action == ActionKind::kBadRange) {
      const Rule& rule = plan.action->state->rule;
      const uint64_t length = rule.length ? rule.length : size;
      fs.bad_ranges().Mark(FileKey(inode), call.offset, length, rule.id);
      fs.engine().LogFault(call, *plan.action, {{"bad_length", length}, {"errno", "EIO"}});
      return ReplyErr(req, timer, EIO);
    }
  }
  if (plan.action && plan.action->state->rule.action == ActionKind::kMisdirectedRead) {
    return MisdirectedRead(fs, req, timer, fh, call, *plan.action);
  }
  const bool damage = plan.action.has_value();
  // Below two pages libfuse would not splice anyway, but copy through a fresh malloc'ed buffer.
  if (!damage && !fh.direct && fs.options().splice && size >= kMinSpliceRead) {
    // Fast path: the source file's pages go to the kernel by splice when it can.
    fuse_bufvec buf = OneBuffer(size);
    buf.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buf.buf[0].fd = fh.fd;
    buf.buf[0].pos = off;
    timer.Done(0);
    fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
    return;
  }
  if (fh.direct) WorkerPool::MayBlock();  // O_DIRECT waits for the device
  uint8_t* data = AlignedBuffer(size);
  if (data == nullptr) return ReplyErr(req, timer, ENOMEM);
  const ssize_t n = ReadToBuffer(fh, data, size, off);
  if (n < 0) return ReplyErr(req, timer, errno);
  size_t len = static_cast<size_t>(n);
  if (damage) {
    ReadDamage d = DamageRead(*plan.action, std::span<uint8_t>(data, len));
    if (!d.detail.is_null()) fs.engine().LogFault(call, *plan.action, std::move(d.detail));
    len = static_cast<size_t>(d.returned);
  }
  timer.Done(0);
  fuse_reply_buf(req, reinterpret_cast<const char*>(data), len);
}

ssize_t WriteAll(int fd, const uint8_t* data, size_t size, off_t off) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pwrite(fd, data + done, size - done, off + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return done > 0 ? static_cast<ssize_t>(done) : -1;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

struct ReopenCtx {
  int proc_self_fd;
  int inode_fd;
};
int Reopen(void* ctx) {
  auto* c = static_cast<ReopenCtx*>(ctx);
  return openat(c->proc_self_fd, std::to_string(c->inode_fd).c_str(), O_RDWR);
}

void OpWriteBuf(fuse_req_t req, fuse_ino_t ino, fuse_bufvec* in_buf, off_t off, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kWrite);
  const FileHandle fh = Fh(fi);
  const size_t size = fuse_buf_size(in_buf);
  const bool sticky = !fs.bad_ranges().empty();
  CallInfo call{Op::kWrite, {}, static_cast<uint64_t>(off), size};
  CallPlan plan;
  std::string path;
  if (fs.engine().Active()) {
    path = fs.PathOf(fs.Get(ino));
    call.path = path;
    if (int err = Inject(fs, call, &plan)) return ReplyErr(req, timer, err);
  }
  if (!plan.action && !plan.track_unsynced && !sticky && !fh.direct) {
    // Fast path (no rule touched this call): the data is spliced into the source file.
    fuse_bufvec out = OneBuffer(size);
    out.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    out.buf[0].fd = fh.fd;
    out.buf[0].pos = off;
    const ssize_t res = fuse_buf_copy(&out, in_buf, static_cast<fuse_buf_copy_flags>(0));
    if (res < 0) return ReplyErr(req, timer, static_cast<int>(-res));
    timer.Done(0);
    fuse_reply_write(req, static_cast<size_t>(res));
    return;
  }
  if (fh.direct) WorkerPool::MayBlock();  // O_DIRECT waits for the device
  Inode& inode = fs.Get(ino);
  uint8_t* data = AlignedBuffer(size);
  if (data == nullptr) return ReplyErr(req, timer, ENOMEM);
  fuse_bufvec mem = OneBuffer(size);
  mem.buf[0].mem = data;
  const ssize_t copied = fuse_buf_copy(&mem, in_buf, static_cast<fuse_buf_copy_flags>(0));
  if (copied < 0) return ReplyErr(req, timer, static_cast<int>(-copied));
  size_t len = static_cast<size_t>(copied);
  const uint64_t key = FileKey(inode);
  if (plan.track_unsynced) {
    ReopenCtx ctx{fs.proc_self_fd(), inode.fd};
    Status s = fs.unsynced().BeforeWrite(key, path, ino, call.offset, len, &Reopen, &ctx);
    if (!s.ok()) spdlog::warn("{}", s.ToString());
  }
  off_t target = off;
  size_t to_write = len;
  size_t reply = len;
  int reply_err = 0;
  uint64_t bad_length = 0;
  if (plan.action) {
    WriteDamage d = DamageWrite(*plan.action, std::span<uint8_t>(data, len), call.offset, fh.direct);
    if (!d.detail.is_null()) fs.engine().LogFault(call, *plan.action, std::move(d.detail));
    target = static_cast<off_t>(d.target);
    to_write = static_cast<size_t>(d.to_write);
    reply = static_cast<size_t>(d.reply);
    reply_err = d.err;
    bad_length = d.bad_length;
  }
  if (to_write > 0) {
    const ssize_t n = WriteAll(fh.fd, data, to_write, target);
    if (n < 0) return ReplyErr(req, timer, errno);
    if (static_cast<size_t>(n) < to_write && reply_err == 0) reply = static_cast<size_t>(n);
    if (!fs.bad_ranges().empty() && target == off) fs.bad_ranges().Heal(key, call.offset, static_cast<uint64_t>(n));
  }
  if (bad_length > 0) fs.bad_ranges().Mark(key, call.offset, bad_length, plan.action->state->rule.id);
  if (reply_err != 0) return ReplyErr(req, timer, reply_err);
  timer.Done(0);
  fuse_reply_write(req, reply);
}

void OpFlush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kFlush);
  WorkerPool::MayBlock();  // close() of the source may write back (NFS, FUSE sources)
  if (int err = Check(fs, Op::kFlush, fs.Get(ino))) return ReplyErr(req, timer, NeverEnosys(err));
  // close() of a duplicate makes the source see the flush the application asked for.
  const int dup_fd = dup(Fh(fi).fd);
  if (dup_fd < 0 || close(dup_fd) != 0) return ReplyErr(req, timer, NeverEnosys(errno));
  timer.Done(0);
  fuse_reply_err(req, 0);
}

void OpRelease(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kRelease);
  WorkerPool::MayBlock();
  // release cannot fail towards the application (close has returned); rules only delay it.
  (void)Check(fs, Op::kRelease, fs.Get(ino));
  close(Fh(fi).fd);
  timer.Done(0);
  fuse_reply_err(req, 0);
}

void OpFsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kFsync);
  WorkerPool::MayBlock();
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kFsync, inode)) return ReplyErr(req, timer, NeverEnosys(err));
  const int res = datasync ? fdatasync(Fh(fi).fd) : fsync(Fh(fi).fd);
  if (res != 0) return ReplyErr(req, timer, NeverEnosys(errno));
  fs.unsynced().Synced(FileKey(inode));
  timer.Done(0);
  fuse_reply_err(req, 0);
}

void OpFallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kFallocate);
  WorkerPool::MayBlock();
  Inode& inode = fs.Get(ino);
  if (fs.engine().Active()) {
    const std::string path = fs.PathOf(inode);
    CallPlan plan;
    CallInfo call{Op::kFallocate, path, static_cast<uint64_t>(offset), static_cast<uint64_t>(length)};
    if (int err = Inject(fs, call, &plan)) return ReplyErr(req, timer, NeverEnosys(err));
  }
  if (fallocate(Fh(fi).fd, mode, offset, length) != 0) return ReplyErr(req, timer, NeverEnosys(errno));
  timer.Done(0);
  fuse_reply_err(req, 0);
}

// ---- directories ----

void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kOpendir);
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kOpendir, inode)) return ReplyErr(req, timer, err);
  const int fd = openat(inode.fd, ".", O_RDONLY | O_DIRECTORY);
  if (fd < 0) return ReplyErr(req, timer, errno);
  DIR* dp = fdopendir(fd);
  if (dp == nullptr) {
    const int err = errno;
    close(fd);
    return ReplyErr(req, timer, err);
  }
  auto* dh = new DirHandle;
  dh->dp = dp;
  fi->fh = reinterpret_cast<uint64_t>(dh);
  fs.HandleOpened(fi->fh);
  fi->cache_readdir = fs.options().cache == CacheMode::kAlways ? 1 : 0;
  timer.Done(0);
  if (fuse_reply_open(req, fi) != 0) {
    fs.HandleReleased(fi->fh);
    closedir(dp);
    delete dh;
  }
}

void OpReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kReaddir);
  if (int err = Check(fs, Op::kReaddir, fs.Get(ino))) return ReplyErr(req, timer, err);
  auto* dh = reinterpret_cast<DirHandle*>(fi->fh);
  std::lock_guard<std::mutex> lock(dh->mu);
  std::vector<char> buf(size);
  char* p = buf.data();
  size_t rem = size;
  if (offset != dh->offset) {
    seekdir(dh->dp, offset);
    dh->entry = nullptr;
    dh->offset = offset;
  }
  while (true) {
    if (dh->entry == nullptr) {
      errno = 0;
      dh->entry = readdir(dh->dp);
      if (dh->entry == nullptr) {
        if (errno != 0 && rem == size) return ReplyErr(req, timer, errno);
        break;
      }
    }
    struct stat st {};
    st.st_ino = dh->entry->d_ino;
    st.st_mode = static_cast<mode_t>(dh->entry->d_type) << 12;
    const off_t next = dh->entry->d_off;
    const size_t entsize = fuse_add_direntry(req, p, rem, dh->entry->d_name, &st, next);
    if (entsize > rem) break;  // keep this entry for the next call
    p += entsize;
    rem -= entsize;
    dh->entry = nullptr;
    dh->offset = next;
  }
  timer.Done(0);
  fuse_reply_buf(req, buf.data(), size - rem);
}

void OpReleasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  (void)ino;
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kReleasedir);
  auto* dh = reinterpret_cast<DirHandle*>(fi->fh);
  fs.HandleReleased(fi->fh);
  {
    // The last readdir of this handle ran on another thread: order its end before the delete.
    std::lock_guard<std::mutex> lock(dh->mu);
  }
  closedir(dh->dp);
  delete dh;
  timer.Done(0);
  fuse_reply_err(req, 0);
}

void OpFsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kFsyncdir);
  WorkerPool::MayBlock();
  if (int err = Check(fs, Op::kFsyncdir, fs.Get(ino))) return ReplyErr(req, timer, NeverEnosys(err));
  auto* dh = reinterpret_cast<DirHandle*>(fi->fh);
  std::lock_guard<std::mutex> lock(dh->mu);
  const int fd = dirfd(dh->dp);
  const int res = datasync ? fdatasync(fd) : fsync(fd);
  if (res != 0) return ReplyErr(req, timer, NeverEnosys(errno));
  if (fs.unsynced().following_names()) fs.unsynced().DirSynced(fs.PathOf(fs.Get(ino)));
  timer.Done(0);
  fuse_reply_err(req, 0);
}

void OpStatfs(fuse_req_t req, fuse_ino_t ino) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kStatfs);
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kStatfs, inode)) return ReplyErr(req, timer, err);
  struct statvfs st {};
  if (fstatvfs(inode.fd, &st) != 0) return ReplyErr(req, timer, errno);
  timer.Done(0);
  fuse_reply_statfs(req, &st);
}

void OpAccess(fuse_req_t req, fuse_ino_t ino, int mask) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kAccess);
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kAccess, inode)) return ReplyErr(req, timer, err);
  const int res = faccessat(fs.proc_self_fd(), std::to_string(inode.fd).c_str(), mask, 0);
  timer.Done(res == 0 ? 0 : errno);
  fuse_reply_err(req, res == 0 ? 0 : errno);
}

// ---- extended attributes (through /proc/self/fd, since O_PATH descriptors refuse f*xattr) ----

void ReplyXattr(fuse_req_t req, CallTimer& timer, ssize_t n, size_t size, const std::vector<char>& buf) {
  if (n < 0) return ReplyErr(req, timer, NeverEnosys(errno));
  timer.Done(0);
  if (size == 0) {
    fuse_reply_xattr(req, static_cast<size_t>(n));
  } else {
    fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
  }
}

void OpSetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size, int flags) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kSetxattr);
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kSetxattr, inode)) return ReplyErr(req, timer, NeverEnosys(err));
  if (setxattr(ProcPath(inode.fd).c_str(), name, value, size, flags) != 0) {
    return ReplyErr(req, timer, NeverEnosys(errno));
  }
  timer.Done(0);
  fuse_reply_err(req, 0);
}

void OpGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kGetxattr);
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kGetxattr, inode)) return ReplyErr(req, timer, NeverEnosys(err));
  std::vector<char> buf(size);
  const ssize_t n = getxattr(ProcPath(inode.fd).c_str(), name, size ? buf.data() : nullptr, size);
  ReplyXattr(req, timer, n, size, buf);
}

void OpListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kListxattr);
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kListxattr, inode)) return ReplyErr(req, timer, NeverEnosys(err));
  std::vector<char> buf(size);
  const ssize_t n = listxattr(ProcPath(inode.fd).c_str(), size ? buf.data() : nullptr, size);
  ReplyXattr(req, timer, n, size, buf);
}

void OpRemovexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  FaultFs& fs = Fs(req);
  CallTimer timer(fs, Op::kRemovexattr);
  Inode& inode = fs.Get(ino);
  if (int err = Check(fs, Op::kRemovexattr, inode)) return ReplyErr(req, timer, NeverEnosys(err));
  if (removexattr(ProcPath(inode.fd).c_str(), name) != 0) return ReplyErr(req, timer, NeverEnosys(errno));
  timer.Done(0);
  fuse_reply_err(req, 0);
}

fuse_lowlevel_ops MakeOps() {
  fuse_lowlevel_ops ops{};
  ops.init = OpInit;
  ops.lookup = OpLookup;
  ops.forget = OpForget;
  ops.forget_multi = OpForgetMulti;
  ops.getattr = OpGetattr;
  ops.setattr = OpSetattr;
  ops.readlink = OpReadlink;
  ops.mknod = OpMknod;
  ops.mkdir = OpMkdir;
  ops.symlink = OpSymlink;
  ops.link = OpLink;
  ops.unlink = OpUnlink;
  ops.rmdir = OpRmdir;
  ops.rename = OpRename;
  ops.open = OpOpen;
  ops.create = OpCreate;
  ops.read = OpRead;
  ops.write_buf = OpWriteBuf;
  ops.flush = OpFlush;
  ops.release = OpRelease;
  ops.fsync = OpFsync;
  ops.fallocate = OpFallocate;
  ops.opendir = OpOpendir;
  ops.readdir = OpReaddir;
  ops.releasedir = OpReleasedir;
  ops.fsyncdir = OpFsyncdir;
  ops.statfs = OpStatfs;
  ops.access = OpAccess;
  ops.setxattr = OpSetxattr;
  ops.getxattr = OpGetxattr;
  ops.listxattr = OpListxattr;
  ops.removexattr = OpRemovexattr;
  return ops;
}

}  // namespace

// ---- FaultFs: the inode table ----

FaultFs::FaultFs(FsOptions options, RuleEngine& engine)
    : options_(std::move(options)),
      engine_(engine),
      attr_timeout_(options_.cache == CacheMode::kNone ? 0.0 : (options_.cache == CacheMode::kAlways ? 86400.0 : 1.0)) {}

FaultFs::~FaultFs() {
  // Directory handles the kernel never released (faultfs stopped while they were open).
  for (uint64_t fh : dir_handles_) {
    auto* dh = reinterpret_cast<DirHandle*>(fh);
    closedir(dh->dp);
    delete dh;
  }
  for (auto& [key, inode] : inodes_) close(inode->fd);
  if (root_.fd >= 0) close(root_.fd);
  if (proc_self_fd_ >= 0) close(proc_self_fd_);
}

Status FaultFs::Open() {
  root_.fd = open(options_.source.c_str(), O_PATH | O_DIRECTORY);
  if (root_.fd < 0) return Status::IoError("cannot open source directory '" + options_.source + "'", errno);
  struct stat st {};
  if (fstatat(root_.fd, "", &st, AT_EMPTY_PATH) != 0) return Status::IoError("stat('" + options_.source + "')", errno);
  root_.src_dev = st.st_dev;
  root_.src_ino = st.st_ino;
  root_.nlookup = 2;
  return Status::Ok();
}

Status FaultFs::OpenProcessFds() {
  // "/proc/self" resolves when opened: a descriptor taken before fuse_daemonize's fork would name
  // the parent's table, which is gone once the parent exits.
  if (proc_self_fd_ >= 0) close(proc_self_fd_);
  proc_self_fd_ = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (proc_self_fd_ < 0) return Status::IoError("cannot open /proc/self/fd", errno);
  return Status::Ok();
}

const fuse_lowlevel_ops& FaultFs::Ops() {
  static const fuse_lowlevel_ops ops = MakeOps();
  return ops;
}

void FaultFs::HandleOpened(uint64_t fh) {
  std::lock_guard<std::mutex> lock(handles_mu_);
  dir_handles_.insert(fh);
}

void FaultFs::HandleReleased(uint64_t fh) {
  std::lock_guard<std::mutex> lock(handles_mu_);
  dir_handles_.erase(fh);
}

Inode& FaultFs::Get(fuse_ino_t ino) {
  if (ino == FUSE_ROOT_ID) return root_;
  return *reinterpret_cast<Inode*>(ino);
}

std::string FaultFs::PathOf(const Inode& inode) const {
  std::shared_lock<std::shared_mutex> lock(paths_mu_);
  return inode.path;
}

std::string FaultFs::ChildPath(const Inode& parent, const char* name) const {
  std::shared_lock<std::shared_mutex> lock(paths_mu_);
  if (parent.path.empty()) return name;
  return parent.path + "/" + name;
}

int FaultFs::Lookup(Inode& parent, const char* name, const std::string& path, fuse_entry_param* e) {
  const int fd = openat(parent.fd, name, O_PATH | O_NOFOLLOW);
  if (fd < 0) return errno;
  struct stat st {};
  if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    const int err = errno;
    close(fd);
    return err;
  }
  Inode* inode = nullptr;
  {
    std::lock_guard<std::mutex> lock(inodes_mu_);
    auto& slot = inodes_[{st.st_dev, st.st_ino}];
    if (slot) {
      close(fd);
      ++slot->nlookup;
    } else {
      slot = std::make_unique<Inode>();
      slot->fd = fd;
      slot->src_dev = st.st_dev;
      slot->src_ino = st.st_ino;
      slot->nlookup = 1;
      std::unique_lock<std::shared_mutex> path_lock(paths_mu_);
      slot->path = path;
    }
    inode = slot.get();
  }
  e->ino = reinterpret_cast<fuse_ino_t>(inode);
  e->attr = st;
  e->attr_timeout = attr_timeout_;
  e->entry_timeout = attr_timeout_;
  return 0;
}

void FaultFs::Forget(fuse_ino_t ino, uint64_t n) {
  if (ino == FUSE_ROOT_ID) return;
  Inode& inode = Get(ino);
  std::lock_guard<std::mutex> lock(inodes_mu_);
  if (inode.nlookup > n) {
    inode.nlookup -= n;
    return;
  }
  close(inode.fd);
  inodes_.erase({inode.src_dev, inode.src_ino});
}

void FaultFs::Renamed(const std::string& old_path, const std::string& new_path, bool exchange) {
  std::lock_guard<std::mutex> lock(inodes_mu_);
  std::unique_lock<std::shared_mutex> path_lock(paths_mu_);
  // Moves `from` (and everything below it) to `to`; with RENAME_EXCHANGE both ways at once.
  auto moved = [](const std::string& path, const std::string& from, const std::string& to, std::string* out) {
    if (path == from) {
      *out = to;
      return true;
    }
    if (path.size() > from.size() && path.compare(0, from.size(), from) == 0 && path[from.size()] == '/') {
      *out = to + path.substr(from.size());
      return true;
    }
    return false;
  };
  for (auto& [key, inode] : inodes_) {
    std::string next;
    if (moved(inode->path, old_path, new_path, &next) || (exchange && moved(inode->path, new_path, old_path, &next))) {
      inode->path = std::move(next);
    }
  }
}

nlohmann::json FaultFs::Crash() {
  std::vector<uint64_t> inos;
  std::vector<std::pair<uint64_t, std::string>> gone;
  nlohmann::json result = unsynced_.Crash(root_.fd, &inos, &gone);
  fuse_session* se = session_.load();
  if (se != nullptr) {
    for (uint64_t ino : inos) fuse_lowlevel_notify_inval_inode(se, ino, 0, 0);
    for (const auto& [parent, name] : gone) fuse_lowlevel_notify_inval_entry(se, parent, name.c_str(), name.size());
  }
  engine_.LogEvent({{"event", "crash"}, {"result", result}});
  return result;
}

}  // namespace kvchaos::faultfs
