// FileOps on the operating system: each call is the system call of the same name, retried on EINTR.
#include "core/store/file_ops.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace kvchaos::store {
namespace {

template <typename F>
auto RetryEintr(F f) {
  for (;;) {
    auto r = f();
    if (r >= 0 || errno != EINTR) return r;
  }
}

class RealFileOps final : public FileOps {
 public:
  int Open(const std::string& path, int flags, mode_t mode) override {
    return RetryEintr([&] { return ::open(path.c_str(), flags | O_CLOEXEC, mode); });
  }
  ssize_t Pwrite(int fd, const void* buf, size_t len, off_t offset) override {
    return RetryEintr([&] { return ::pwrite(fd, buf, len, offset); });
  }
  ssize_t Pread(int fd, void* buf, size_t len, off_t offset) override {
    return RetryEintr([&] { return ::pread(fd, buf, len, offset); });
  }
  ssize_t Pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) override {
    return RetryEintr([&] { return ::pwritev(fd, iov, iovcnt, offset); });
  }
  ssize_t Preadv(int fd, const struct iovec* iov, int iovcnt, off_t offset) override {
    return RetryEintr([&] { return ::preadv(fd, iov, iovcnt, offset); });
  }
  int Fsync(int fd) override { return RetryEintr([&] { return ::fsync(fd); }); }
  int Fdatasync(int fd) override { return RetryEintr([&] { return ::fdatasync(fd); }); }
  int Fallocate(int fd, off_t offset, off_t len) override {
    return RetryEintr([&] { return ::fallocate(fd, 0, offset, len); });
  }
  // close(2) must not be retried on EINTR: the descriptor is gone either way on Linux.
  int Close(int fd) override { return ::close(fd); }
  int Unlink(const std::string& path) override { return ::unlink(path.c_str()); }
  int Rename(const std::string& from, const std::string& to) override { return ::rename(from.c_str(), to.c_str()); }
  int Mkdir(const std::string& path, mode_t mode) override { return ::mkdir(path.c_str(), mode); }
  int Rmdir(const std::string& path) override { return ::rmdir(path.c_str()); }
  int Stat(const std::string& path, bool* is_dir, off_t* size) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return -1;
    if (is_dir != nullptr) *is_dir = S_ISDIR(st.st_mode);
    if (size != nullptr) *size = st.st_size;
    return 0;
  }
  int FileId(const std::string& path, uint64_t* device, uint64_t* inode) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return -1;
    *device = st.st_dev;
    *inode = st.st_ino;
    return 0;
  }
};

}  // namespace

FileOps& FileOps::Real() {
  static RealFileOps ops;
  return ops;
}

}  // namespace kvchaos::store
