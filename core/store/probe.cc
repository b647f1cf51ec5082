// The 4 KiB write/read/verify/close/cleanup probe (see probe.h).
#include "core/store/probe.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/store/aligned_buffer.h"

namespace kvchaos::store {
namespace {

constexpr size_t kProbeBytes = 4096;

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string ShardDirOf(const std::string& backend, uint64_t token, int shard_width) {
  return backend + "/" + ShardDirName(Hex16(token), shard_width);
}

Status OpFailed(const std::string& backend, const char* op, const std::string& file, int err) {
  return Status::IoError("backend '" + backend + "': " + op + "('" + file + "') failed", err);
}

}  // namespace

std::string ProbeFilePath(const std::string& backend, uint64_t token, int shard_width) {
  return ShardDirOf(backend, token, shard_width) + "/.probe_" + Hex16(token) + ".tmp";
}

Status RunSmallIoProbe(FileOps& ops, const std::string& backend, bool io_direct, uint64_t token, int shard_width) {
  bool is_dir = false;
  if (ops.Stat(backend, &is_dir, nullptr) != 0) {
    const int err = errno;
    if (err == ENOENT) {
      return Status(StatusCode::kNotFound, "backend '" + backend + "': stat('" + backend + "') failed: data directory missing", err);
    }
    return OpFailed(backend, "stat", backend, err);
  }
  if (!is_dir) return Status::IoError("backend '" + backend + "': '" + backend + "' is not a directory", ENOTDIR);

  const std::string dir = ShardDirOf(backend, token, shard_width);
  const std::string file = ProbeFilePath(backend, token, shard_width);
  if (ops.Mkdir(dir, 0755) != 0 && errno != EEXIST) return OpFailed(backend, "mkdir", dir, errno);

  AlignedBuffer written(kProbeBytes);
  AlignedBuffer read_back(kProbeBytes);
  for (size_t i = 0; i < kProbeBytes; ++i) written.data()[i] = static_cast<std::byte>((i * 131 + 7) & 0xff);
  std::memset(read_back.data(), 0, kProbeBytes);

  Status result;
  int fd = ops.Open(file, O_CREAT | O_EXCL | O_RDWR | (io_direct ? O_DIRECT : 0), 0644);
  if (fd < 0) {
    result = OpFailed(backend, "open", file, errno);
  } else {
    ssize_t n = ops.Pwrite(fd, written.data(), kProbeBytes, 0);
    if (n != static_cast<ssize_t>(kProbeBytes)) {
      result = n < 0 ? OpFailed(backend, "write", file, errno)
                     : Status::IoError("backend '" + backend + "': write('" + file + "') wrote " + std::to_string(n) +
                                           " of 4096 bytes", EIO);
    }
    if (result.ok() && !io_direct && ops.Fsync(fd) != 0) result = OpFailed(backend, "fsync", file, errno);
    if (result.ok()) {
      n = ops.Pread(fd, read_back.data(), kProbeBytes, 0);
      if (n != static_cast<ssize_t>(kProbeBytes)) {
        result = n < 0 ? OpFailed(backend, "read", file, errno)
                       : Status::IoError("backend '" + backend + "': read('" + file + "') returned " + std::to_string(n) +
                                             " of 4096 bytes", EIO);
      }
    }
    if (result.ok() && std::memcmp(written.data(), read_back.data(), kProbeBytes) != 0) {
      size_t at = 0;
      while (written.data()[at] == read_back.data()[at]) ++at;
      result = Status::IoError("backend '" + backend + "': verify('" + file + "') failed: data read back differs at byte " +
                                   std::to_string(at), EIO);
    }
    if (ops.Close(fd) != 0 && result.ok()) result = OpFailed(backend, "close", file, errno);
    if (ops.Unlink(file) != 0 && result.ok()) result = OpFailed(backend, "unlink", file, errno);
  }
  return result;
}

}  // namespace kvchaos::store
