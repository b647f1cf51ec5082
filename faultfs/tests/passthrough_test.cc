// Passthrough fidelity over a real mount with no rules: a conformance subset of what the store
// and common tools use, each checked through the mount and against the source directory.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "faultfs/tests/mount_fixture.h"

namespace kvchaos::faultfs::testing {
namespace {

class PassthroughTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
    Status s = fs_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  FaultFsMount fs_;
};

std::set<std::string> List(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.insert(e->d_name);
  }
  closedir(d);
  return names;
}

TEST_F(PassthroughTest, FilesWrittenThroughTheMountLandInTheSourceAndBack) {
  WriteFile(fs_.at("a.txt"), "hello faultfs");
  EXPECT_EQ(ReadFile(fs_.src("a.txt")), "hello faultfs");
  WriteFile(fs_.src("b.txt"), "from the source");
  EXPECT_EQ(ReadFile(fs_.at("b.txt")), "from the source");
  // Append, overwrite in the middle, truncate.
  int fd = open(fs_.at("a.txt").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "!!", 2), 2);
  ASSERT_EQ(pwrite(fd, "H", 1, 0), 1) << "O_APPEND writes go to the end";
  close(fd);
  EXPECT_EQ(ReadFile(fs_.src("a.txt")), "hello faultfs!!H");
  ASSERT_EQ(truncate(fs_.at("a.txt").c_str(), 5), 0);
  EXPECT_EQ(ReadFile(fs_.src("a.txt")), "hello");
  struct stat st {};
  ASSERT_EQ(stat(fs_.at("a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 5);
}

TEST_F(PassthroughTest, LargeFileRoundTripsByteForByte) {
  std::string data(8 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 2654435761u) >> 13);
  WriteFile(fs_.at("big"), data);
  EXPECT_TRUE(ReadFile(fs_.src("big")) == data) << "source differs from what was written";
  EXPECT_TRUE(ReadFile(fs_.at("big")) == data) << "read back through the mount differs";
}

TEST_F(PassthroughTest, DirectoriesRenameUnlinkAndListings) {
  ASSERT_EQ(mkdir(fs_.at("d").c_str(), 0750), 0);
  ASSERT_EQ(mkdir(fs_.at("d/sub").c_str(), 0755), 0);
  WriteFile(fs_.at("d/sub/f"), "x");
  WriteFile(fs_.at("d/g"), "y");
  EXPECT_EQ(List(fs_.at("d")), (std::set<std::string>{"sub", "g"}));
  EXPECT_EQ(List(fs_.at("d")), List(fs_.src("d")));
  ASSERT_EQ(rename(fs_.at("d").c_str(), fs_.at("e").c_str()), 0);
  EXPECT_EQ(ReadFile(fs_.at("e/sub/f")), "x");
  EXPECT_EQ(access(fs_.src("d").c_str(), F_OK), -1);
  ASSERT_EQ(rename(fs_.at("e/g").c_str(), fs_.at("e/sub/f").c_str()), 0) << "rename replaces the target";
  EXPECT_EQ(ReadFile(fs_.src("e/sub/f")), "y");
  EXPECT_EQ(rmdir(fs_.at("e/sub").c_str()), -1);
  EXPECT_EQ(errno, ENOTEMPTY);
  ASSERT_EQ(unlink(fs_.at("e/sub/f").c_str()), 0);
  ASSERT_EQ(rmdir(fs_.at("e/sub").c_str()), 0);
  EXPECT_TRUE(List(fs_.src("e")).empty());
  EXPECT_EQ(open(fs_.at("nope").c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(mkdir(fs_.at("e").c_str(), 0755), -1);
  EXPECT_EQ(errno, EEXIST);
  // Many entries: readdir continues across several kernel calls.
  for (int i = 0; i < 300; ++i) WriteFile(fs_.at("e/file_with_a_long_name_" + std::to_string(i)), "");
  EXPECT_EQ(List(fs_.at("e")).size(), 300u);
}

TEST_F(PassthroughTest, LinksModesTimesAndStatfs) {
  WriteFile(fs_.at("f"), "data");
  ASSERT_EQ(symlink("f", fs_.at("s").c_str()), 0);
  char buf[64] = {};
  ASSERT_EQ(readlink(fs_.at("s").c_str(), buf, sizeof(buf)), 1);
  EXPECT_STREQ(buf, "f");
  EXPECT_EQ(ReadFile(fs_.at("s")), "data");
  ASSERT_EQ(link(fs_.at("f").c_str(), fs_.at("h").c_str()), 0);
  struct stat st {};
  ASSERT_EQ(stat(fs_.at("h").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 2u);
  ASSERT_EQ(chmod(fs_.at("f").c_str(), 0600), 0);
  ASSERT_EQ(stat(fs_.src("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  timespec times[2] = {{1000000000, 0}, {1200000000, 5}};
  ASSERT_EQ(utimensat(AT_FDCWD, fs_.at("f").c_str(), times, 0), 0);
  ASSERT_EQ(stat(fs_.src("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_sec, 1200000000);
  struct statvfs a {}, b {};
  ASSERT_EQ(statvfs(fs_.at("").c_str(), &a), 0);
  ASSERT_EQ(statvfs(fs_.source().c_str(), &b), 0);
  EXPECT_EQ(a.f_blocks, b.f_blocks);
  EXPECT_EQ(a.f_bsize, b.f_bsize);
}

TEST_F(PassthroughTest, XattrsFallocateAndFsyncNeverAnswerEnosys) {
  WriteFile(fs_.at("x"), "");
  const std::string path = fs_.at("x");
  if (setxattr(path.c_str(), "user.k", "v1", 2, 0) != 0) {
    EXPECT_NE(errno, ENOSYS);
  } else {
    char value[8] = {};
    EXPECT_EQ(getxattr(path.c_str(), "user.k", value, sizeof(value)), 2);
    EXPECT_STREQ(value, "v1");
    EXPECT_EQ(getxattr(fs_.src("x").c_str(), "user.k", value, sizeof(value)), 2);
    char names[64] = {};
    EXPECT_GT(listxattr(path.c_str(), names, sizeof(names)), 0);
    EXPECT_EQ(removexattr(path.c_str(), "user.k"), 0);
    EXPECT_EQ(getxattr(path.c_str(), "user.k", value, sizeof(value)), -1);
    EXPECT_EQ(errno, ENODATA);
  }
  const int fd = open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(fallocate(fd, 0, 0, 1 << 20), 0) << std::strerror(errno);
  struct stat st {};
  ASSERT_EQ(stat(fs_.src("x").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);
  EXPECT_EQ(fsync(fd), 0);
  EXPECT_EQ(fdatasync(fd), 0);
  close(fd);
}

TEST_F(PassthroughTest, ODirectReadsAndWritesWithAlignedBuffers) {
  void* mem = nullptr;
  ASSERT_EQ(posix_memalign(&mem, 4096, 1 << 20), 0);
  auto* buf = static_cast<uint8_t*>(mem);
  for (int i = 0; i < (1 << 20); ++i) buf[i] = static_cast<uint8_t>(i * 7);
  int fd = open(fs_.at("direct").c_str(), O_CREAT | O_RDWR | O_DIRECT, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(pwrite(fd, buf, 1 << 20, 0), 1 << 20) << std::strerror(errno);
  std::memset(buf, 0, 1 << 20);
  ASSERT_EQ(pread(fd, buf, 1 << 20, 0), 1 << 20) << std::strerror(errno);
  for (int i = 0; i < (1 << 20); i += 4093) ASSERT_EQ(buf[i], static_cast<uint8_t>(i * 7)) << "byte " << i;
  ASSERT_EQ(pread(fd, buf, 4096, 8192), 4096);
  EXPECT_EQ(buf[0], static_cast<uint8_t>(8192 * 7));
  close(fd);
  const std::string src = ReadFile(fs_.src("direct"));
  ASSERT_EQ(src.size(), 1u << 20);
  EXPECT_EQ(static_cast<uint8_t>(src[12345]), static_cast<uint8_t>(12345 * 7));
  std::free(mem);
}

// Mode none: every write is direct, and its chunks are received into the worker's huge-page
// buffer with the data page-aligned there. Unaligned application buffers and file offsets, and
// writes larger than one request (1008 KiB), must still land byte for byte.
TEST(DirectWritePathTest, UnalignedMultiRequestWritesInModeNoneLandByteForByte) {
  if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
  FaultFsMount fs;
  MountOptions options;
  options.cache = "none";
  Status s = fs.Start(options);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const size_t size = (5u << 20) + 12345;
  std::vector<char> mem(size + 64);
  char* buf = mem.data() + 16;  // fio's buffers sit 16 bytes into a page, too
  for (size_t i = 0; i < size; ++i) buf[i] = static_cast<char>((i * 2654435761u) >> 11);
  int fd = open(fs.at("w").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(pwrite(fd, buf, size, 777), static_cast<ssize_t>(size)) << std::strerror(errno);
  ASSERT_EQ(pwrite(fd, buf + 3, 3u << 20, 4096 + 5), static_cast<ssize_t>(3u << 20)) << std::strerror(errno);
  close(fd);
  std::string want(777, '\0');
  want.append(buf, size);
  want.replace(4096 + 5, 3u << 20, buf + 3, 3u << 20);
  EXPECT_TRUE(ReadFile(fs.src("w")) == want) << "the source differs from what was written";
  EXPECT_TRUE(ReadFile(fs.at("w")) == want) << "reading back through the mount differs";
}

// CPU time of all of a process's threads, from the scheduler's own accounting.
std::chrono::nanoseconds ProcessCpu(pid_t pid) {
  std::chrono::nanoseconds total{0};
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(task.path() / "schedstat");
    long long ns = 0;
    if (in >> ns) total += std::chrono::nanoseconds(ns);
  }
  return total;
}

// A worker polls /dev/fuse briefly after each reply (--spin-us): a mount that has gone idle must
// not keep burning a CPU.
TEST(DirectWritePathTest, AMountThatGoesIdleAfterABurstOfWritesUsesNoCpu) {
  if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
  FaultFsMount fs;
  MountOptions options;
  options.cache = "none";
  Status s = fs.Start(options);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string chunk(1 << 20, 'x');
  int fd = open(fs.at("burst").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  for (int i = 0; i < 32; ++i) ASSERT_EQ(write(fd, chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
  close(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto before = ProcessCpu(fs.pid());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto used = ProcessCpu(fs.pid()) - before;
  EXPECT_LT(used, std::chrono::milliseconds(25))
      << "faultfs used " << std::chrono::duration_cast<std::chrono::microseconds>(used).count()
      << " us of CPU in 500 ms with nothing to do";
}

TEST(FsyncReachesSourceTest, AnFsyncErrorOfTheSourceComesBackThroughTheMount) {
  if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
  // The source of the outer mount is an inner faultfs whose fsync fails: the outer fsync must
  // have called the source's fsync to see that error.
  FaultFsMount inner;
  ASSERT_TRUE(inner.Start().ok());
  FaultFsMount outer;
  MountOptions options;
  options.source = inner.mnt();
  Status s = outer.Start(options);
  ASSERT_TRUE(s.ok()) << s.ToString();
  WriteFile(outer.at("f"), "data");
  ASSERT_TRUE(inner.AddRule({{"id", "bad-fsync"}, {"ops", {"fsync"}}, {"action", "errno"}, {"errno", "EIO"}}).ok());
  int fd = open(outer.at("f").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "x", 1), 1);
  EXPECT_EQ(fsync(fd), -1);
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(fdatasync(fd), -1) << "fdatasync must reach the source too";
  close(fd);
  auto stats = inner.Ctl({{"cmd", "stats"}});
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ((*stats)["ops"]["fsync"]["calls"], 2) << stats->dump();
  outer.Stop();
}

}  // namespace
}  // namespace kvchaos::faultfs::testing
