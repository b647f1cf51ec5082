// FileOps: the system calls the store makes on backend files, behind one small interface. The
// real implementation calls the OS; tests wrap it to make one operation on one backend fail, hang
// or return late (LevelDB's fault-injection style: a wrapper over one environment interface, no
// #ifdefs in production code). Every call returns -1 and sets errno on failure, like the syscall.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <string>

namespace kvchaos::store {

class FileOps {
 public:
  virtual ~FileOps() = default;
  virtual int Open(const std::string& path, int flags, mode_t mode) = 0;
  virtual ssize_t Pwrite(int fd, const void* buf, size_t len, off_t offset) = 0;
  virtual ssize_t Pread(int fd, void* buf, size_t len, off_t offset) = 0;
  virtual ssize_t Pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) = 0;
  virtual ssize_t Preadv(int fd, const struct iovec* iov, int iovcnt, off_t offset) = 0;
  virtual int Fsync(int fd) = 0;
  // fdatasync(2): the data and the metadata needed to read it back (size, allocation). Defaults to
  // Fsync, which promises more, for implementations that do not tell the two apart.
  virtual int Fdatasync(int fd) { return Fsync(fd); }
  // fallocate(2) mode 0: reserves [offset, offset+len) and extends the size to cover it.
  virtual int Fallocate(int fd, off_t offset, off_t len) = 0;
  virtual int Close(int fd) = 0;
  virtual int Unlink(const std::string& path) = 0;
  virtual int Rename(const std::string& from, const std::string& to) = 0;
  virtual int Mkdir(const std::string& path, mode_t mode) = 0;
  virtual int Rmdir(const std::string& path) = 0;
  // stat(2) reduced to what the store needs: 0 and *is_dir / *size on success.
  virtual int Stat(const std::string& path, bool* is_dir, off_t* size) = 0;
  // stat(2)'s identity of the file: two paths name the same file iff device and inode match.
  virtual int FileId(const std::string& path, uint64_t* device, uint64_t* inode) = 0;

  // The process-wide OS implementation.
  static FileOps& Real();
};

// Forwards every call to `base`; tests override the calls they want to disturb.
class ForwardingFileOps : public FileOps {
 public:
  explicit ForwardingFileOps(FileOps& base) : base_(base) {}
  int Open(const std::string& path, int flags, mode_t mode) override { return base_.Open(path, flags, mode); }
  ssize_t Pwrite(int fd, const void* buf, size_t len, off_t offset) override { return base_.Pwrite(fd, buf, len, offset); }
  ssize_t Pread(int fd, void* buf, size_t len, off_t offset) override { return base_.Pread(fd, buf, len, offset); }
  ssize_t Pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) override {
    return base_.Pwritev(fd, iov, iovcnt, offset);
  }
  ssize_t Preadv(int fd, const struct iovec* iov, int iovcnt, off_t offset) override {
    return base_.Preadv(fd, iov, iovcnt, offset);
  }
  int Fsync(int fd) override { return base_.Fsync(fd); }
  int Fdatasync(int fd) override { return base_.Fdatasync(fd); }
  int Fallocate(int fd, off_t offset, off_t len) override { return base_.Fallocate(fd, offset, len); }
  int Close(int fd) override { return base_.Close(fd); }
  int Unlink(const std::string& path) override { return base_.Unlink(path); }
  int Rename(const std::string& from, const std::string& to) override { return base_.Rename(from, to); }
  int Mkdir(const std::string& path, mode_t mode) override { return base_.Mkdir(path, mode); }
  int Rmdir(const std::string& path) override { return base_.Rmdir(path); }
  int Stat(const std::string& path, bool* is_dir, off_t* size) override { return base_.Stat(path, is_dir, size); }
  int FileId(const std::string& path, uint64_t* device, uint64_t* inode) override {
    return base_.FileId(path, device, inode);
  }

 protected:
  FileOps& base_;
};

}  // namespace kvchaos::store
