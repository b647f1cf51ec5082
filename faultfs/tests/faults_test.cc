// Each rule action and each match kind over a real mount: what the application sees, what the
// source holds afterwards, and what the fault log says.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bitset>
#include <cstring>
#include <thread>
#include <vector>

#include "faultfs/tests/mount_fixture.h"

namespace kvchaos::faultfs::testing {
namespace {

using nlohmann::json;

struct IoResult {
  ssize_t n = 0;
  int err = 0;
  std::string data;
};

IoResult ReadAt(const std::string& path, size_t size, off_t off = 0) {
  IoResult r;
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return {-1, errno, {}};
  r.data.resize(size);
  r.n = pread(fd, r.data.data(), size, off);
  r.err = r.n < 0 ? errno : 0;
  r.data.resize(r.n > 0 ? static_cast<size_t>(r.n) : 0);
  close(fd);
  return r;
}

IoResult WriteAt(const std::string& path, const std::string& data, off_t off = 0) {
  IoResult r;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd < 0) return {-1, errno, {}};
  r.n = pwrite(fd, data.data(), data.size(), off);
  r.err = r.n < 0 ? errno : 0;
  close(fd);
  return r;
}

std::string Pattern(size_t size, int seed = 1) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>((i * 131 + static_cast<size_t>(seed) * 17) % 251);
  return s;
}

size_t BitsDiffering(const std::string& a, const std::string& b) {
  size_t bits = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    bits += std::bitset<8>(static_cast<uint8_t>(a[i] ^ b[i])).count();
  }
  return bits;
}

std::vector<json> Faults(const FaultFsMount& fs, const std::string& action) {
  std::vector<json> out;
  for (const json& line : fs.LogLines()) {
    if (line.value("action", "") == action) out.push_back(line);
  }
  return out;
}

class FaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
    Status s = fs_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Add(const json& rule) {
    Status s = fs_.AddRule(rule);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  FaultFsMount fs_;
};

TEST_F(FaultsTest, ErrnoRulesFailTheirOpsWithTheNamedErrno) {
  WriteFile(fs_.src("r"), "readable");
  Add({{"id", "eio"}, {"path", "r"}, {"ops", {"read"}}, {"action", "errno"}, {"errno", "EIO"}});
  Add({{"id", "nospc"}, {"path", "w"}, {"ops", {"write"}}, {"action", "errno"}, {"errno", "ENOSPC"}});
  Add({{"id", "rofs"}, {"path", "ro/*"}, {"ops", {"create", "mkdir"}}, {"action", "errno"}, {"errno", "EROFS"}});
  Add({{"id", "tmo"}, {"path", "t"}, {"ops", {"fsync"}}, {"action", "errno"}, {"errno", "ETIMEDOUT"}});
  EXPECT_EQ(ReadAt(fs_.at("r"), 8).err, EIO);
  IoResult w = WriteAt(fs_.at("w"), "data");
  EXPECT_EQ(w.err, ENOSPC);
  EXPECT_EQ(ReadFile(fs_.src("w")), "") << "a failed write must not reach the source";
  ASSERT_EQ(mkdir(fs_.at("ro").c_str(), 0755), 0);
  EXPECT_EQ(open(fs_.at("ro/f").c_str(), O_CREAT | O_WRONLY, 0644), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(mkdir(fs_.at("ro/d").c_str(), 0755), -1);
  EXPECT_EQ(errno, EROFS);
  const int fd = open(fs_.at("t").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(fsync(fd), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  EXPECT_EQ(fsync(fd), -1) << "the kernel keeps sending fsync: no ENOSYS was ever answered";
  close(fd);
  auto eio = Faults(fs_, "errno");
  ASSERT_GE(eio.size(), 5u);
  EXPECT_EQ(eio[0]["rule"], "eio");
  EXPECT_EQ(eio[0]["op"], "read");
  EXPECT_EQ(eio[0]["path"], "r");
  EXPECT_EQ(eio[0]["errno"], "EIO");
  EXPECT_EQ(eio[0]["seq"], 1);
}

TEST_F(FaultsTest, FlippedReadBitsReachTheReaderButNotTheSource) {
  const std::string data = Pattern(64 << 10);
  WriteFile(fs_.src("f"), data);
  Add({{"id", "flip"}, {"path", "f"}, {"action", "flip_read_bits"}, {"bits", 3}});
  IoResult r = ReadAt(fs_.at("f"), data.size());
  ASSERT_EQ(r.n, static_cast<ssize_t>(data.size()));
  const auto logged = Faults(fs_, "flip_read_bits");
  ASSERT_FALSE(logged.empty());
  size_t flips = 0;
  for (const json& l : logged) flips += l["bits"].size();
  EXPECT_EQ(BitsDiffering(r.data, data), flips) << "exactly the logged bits differ";
  EXPECT_GT(flips, 0u);
  EXPECT_EQ(ReadFile(fs_.src("f")), data) << "the source must stay intact";
}

TEST_F(FaultsTest, CorruptWriteFlipsBitsOnTheWayToDisk) {
  Add({{"id", "cw"}, {"path", "f"}, {"action", "corrupt_write"}, {"bits", 2}});
  const std::string data = Pattern(4096);
  IoResult w = WriteAt(fs_.at("f"), data);
  ASSERT_EQ(w.n, 4096) << "the application sees success";
  EXPECT_EQ(BitsDiffering(ReadFile(fs_.src("f")), data), 2u);
  ASSERT_EQ(Faults(fs_, "corrupt_write").size(), 1u);
}

TEST_F(FaultsTest, ShortReadAndShortWriteReturnFewerBytes) {
  WriteFile(fs_.src("r"), Pattern(8192));
  Add({{"id", "sr"}, {"path", "r"}, {"action", "short_read"}, {"bytes", 100}});
  Add({{"id", "sw"}, {"path", "w"}, {"action", "short_write"}, {"bytes", 10}, {"max_hits", 1}});
  IoResult r = ReadAt(fs_.at("r"), 8192);
  EXPECT_EQ(r.n, 100);
  EXPECT_EQ(r.data, Pattern(8192).substr(0, 100));
  IoResult w = WriteAt(fs_.at("w"), Pattern(1000));
  EXPECT_EQ(w.n, 10);
  EXPECT_EQ(ReadFile(fs_.src("w")), Pattern(1000).substr(0, 10));
}

TEST_F(FaultsTest, TornWriteLeavesAPrefixAndFails) {
  Add({{"id", "torn"}, {"path", "f"}, {"action", "torn_write"}, {"bytes", 300}, {"errno", "EIO"}});
  IoResult w = WriteAt(fs_.at("f"), Pattern(1000));
  EXPECT_EQ(w.err, EIO);
  EXPECT_EQ(ReadFile(fs_.src("f")), Pattern(1000).substr(0, 300));
  auto torn = Faults(fs_, "torn_write");
  ASSERT_EQ(torn.size(), 1u);
  EXPECT_EQ(torn[0]["written"], 300);
}

TEST_F(FaultsTest, LostAndMisdirectedWritesAreReportedDone) {
  WriteFile(fs_.src("lost"), "original");
  WriteFile(fs_.src("mis"), std::string(8192, 'a'));
  Add({{"id", "lost"}, {"path", "lost"}, {"action", "lost_write"}});
  Add({{"id", "mis"}, {"path", "mis"}, {"action", "misdirected_write"}, {"shift", 4096}});
  EXPECT_EQ(WriteAt(fs_.at("lost"), "CHANGED!").n, 8);
  EXPECT_EQ(ReadFile(fs_.src("lost")), "original");
  EXPECT_EQ(WriteAt(fs_.at("mis"), std::string(100, 'b')).n, 100);
  const std::string mis = ReadFile(fs_.src("mis"));
  EXPECT_EQ(mis.substr(0, 100), std::string(100, 'a')) << "the intended place is untouched";
  EXPECT_EQ(mis.substr(4096, 100), std::string(100, 'b')) << "the data landed 4096 bytes further";
}

TEST_F(FaultsTest, MisdirectedReadServesAnotherFilesBytesAtTheSameOffset) {
  ASSERT_EQ(mkdir(fs_.src("blk").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(fs_.src("blk/0a").c_str(), 0755), 0);
  const std::string mine = Pattern(16384, 1);
  const std::string other = Pattern(16384, 2);
  WriteFile(fs_.src("blk/0a/mine"), mine);
  WriteFile(fs_.src("blk/0a/other"), other);
  WriteFile(fs_.src("blk/0a/other.tmp"), Pattern(16384, 3));  // not a source: the glob leaves it out
  WriteFile(fs_.src("blk/0a/short"), "too short");           // cannot hold the range
  Add({{"id", "mis"}, {"path", "blk/**"}, {"action", "misdirected_read"}, {"source", "blk/*/?????"}});
  IoResult r = ReadAt(fs_.at("blk/0a/mine"), 4096, 8192);
  ASSERT_EQ(r.n, 4096) << "a misdirected read answers in full";
  EXPECT_EQ(r.data, other.substr(8192, 4096)) << "the other file's bytes at the same offset";
  EXPECT_EQ(ReadFile(fs_.src("blk/0a/mine")), mine) << "no source file is changed";
  const auto logged = Faults(fs_, "misdirected_read");
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0]["path"], "blk/0a/mine");
  EXPECT_EQ(logged[0]["source"], "blk/0a/other");
  EXPECT_EQ(logged[0]["offset"], 8192);
  EXPECT_EQ(logged[0]["returned"], 4096);
  // With no other file to take bytes from, the read gets its own bytes and the log says so.
  ASSERT_EQ(unlink(fs_.src("blk/0a/other").c_str()), 0);
  IoResult own = ReadAt(fs_.at("blk/0a/mine"), 4096);
  EXPECT_EQ(own.data, mine.substr(0, 4096));
  const auto again = Faults(fs_, "misdirected_read");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_TRUE(again[1]["source"].is_null()) << again[1].dump();
}

TEST_F(FaultsTest, StickyBadRangeFailsReadsUntilRewritten) {
  WriteFile(fs_.src("f"), Pattern(16384));
  Add({{"id", "bad"}, {"path", "f"}, {"action", "bad_range"}, {"max_hits", 1}});
  const int fd = open(fs_.at("f").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  char buf[4096];
  EXPECT_EQ(pread(fd, buf, 4096, 4096), -1);
  EXPECT_EQ(errno, EIO);
  ASSERT_TRUE(fs_.Ctl({{"cmd", "clear"}}).ok());
  EXPECT_EQ(pread(fd, buf, 4096, 4096), -1) << "the range stays bad after the rule is gone";
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(pread(fd, buf, 4096, 0), 4096) << "other ranges read fine";
  const std::string fresh = Pattern(4096, 9);
  ASSERT_EQ(pwrite(fd, fresh.data(), 4096, 4096), 4096);
  ASSERT_EQ(pread(fd, buf, 4096, 4096), 4096) << "a rewrite heals the range";
  EXPECT_EQ(std::string(buf, 4096), fresh);
  close(fd);
}

TEST_F(FaultsTest, CrashDropsWritesThatWereNotFsynced) {
  Add({{"id", "track"}, {"path", "**"}, {"action", "drop_unsynced"}});
  const int fd = open(fs_.at("f").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, "synced--", 8, 0), 8);
  ASSERT_EQ(fsync(fd), 0);
  ASSERT_EQ(pwrite(fd, "LOST", 4, 0), 4);
  ASSERT_EQ(pwrite(fd, "tail-lost", 9, 8), 9);
  close(fd);
  WriteFile(fs_.src("untracked-before"), "x");
  EXPECT_EQ(ReadFile(fs_.src("f")), "LOSTed--tail-lost") << "unsynced writes reached the source before the crash";
  auto reply = fs_.Ctl({{"cmd", "crash"}});
  ASSERT_TRUE(reply.ok());
  EXPECT_TRUE((*reply)["ok"]) << reply->dump();
  EXPECT_EQ(ReadFile(fs_.src("f")), "synced--") << "only the fsynced state survives the crash";
  EXPECT_EQ(ReadFile(fs_.at("f")), "synced--") << "the mount shows the state after the crash";
}

bool Exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

// fsync of a directory through the mount (what makes new names durable under POSIX).
int FsyncDir(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return errno;
  const int res = fsync(fd) == 0 ? 0 : errno;
  close(fd);
  return res;
}

// Creates `path` through the mount with `data`; fsyncs the file when asked.
void CreateFile(const std::string& path, const std::string& data, bool fsync_file) {
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << path << ": " << strerror(errno);
  ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size())) << path;
  if (fsync_file) {
    ASSERT_EQ(fsync(fd), 0) << path;
  }
  close(fd);
}

TEST_F(FaultsTest, CrashRemovesCreatedFilesThatWereNeverMadeDurable) {
  ASSERT_EQ(mkdir(fs_.src("strict").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(fs_.src("d").c_str(), 0755), 0);
  WriteFile(fs_.src("old"), "old-file");
  Add({{"id", "track"}, {"path", "**"}, {"action", "drop_unsynced"}});
  Add({{"id", "posix"}, {"path", "strict/**"}, {"action", "drop_unsynced"}, {"dir_sync", true}});

  CreateFile(fs_.at("never"), "never synced", false);
  CreateFile(fs_.at("file-synced"), "synced", true);
  CreateFile(fs_.at("d/dir-synced"), "name durable, data not", false);
  ASSERT_EQ(FsyncDir(fs_.at("d")), 0);
  CreateFile(fs_.at("d/after-dir-sync"), "created after the directory sync", false);
  CreateFile(fs_.at("tmp"), "renamed, never synced", false);
  ASSERT_EQ(rename(fs_.at("tmp").c_str(), fs_.at("renamed").c_str()), 0);
  CreateFile(fs_.at("gone"), "unlinked before the crash", false);
  ASSERT_EQ(unlink(fs_.at("gone").c_str()), 0);
  CreateFile(fs_.at("strict/both"), "file and directory synced", true);
  ASSERT_EQ(FsyncDir(fs_.at("strict")), 0);
  CreateFile(fs_.at("strict/file-synced"), "fsync of the file is not enough here", true);
  for (const char* f : {"never", "file-synced", "d/dir-synced", "renamed", "strict/file-synced"}) {
    ASSERT_TRUE(Exists(fs_.src(f))) << f << " should reach the source before the crash";
  }

  auto reply = fs_.Ctl({{"cmd", "crash"}});
  ASSERT_TRUE(reply.ok());
  ASSERT_TRUE((*reply)["ok"]) << reply->dump();
  std::vector<std::string> removed = (*reply)["removed"].get<std::vector<std::string>>();
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<std::string>{"d/after-dir-sync", "never", "renamed", "strict/file-synced"}))
      << reply->dump();
  for (const char* f : {"never", "d/after-dir-sync", "renamed", "tmp", "strict/file-synced"}) {
    EXPECT_FALSE(Exists(fs_.src(f))) << f << " was never made durable but survived the crash in the source";
    EXPECT_FALSE(Exists(fs_.at(f))) << f << " still shows through the mount after the crash";
  }
  EXPECT_EQ(ReadFile(fs_.at("file-synced")), "synced") << "an fsynced new file must survive";
  EXPECT_EQ(ReadFile(fs_.at("strict/both")), "file and directory synced");
  EXPECT_TRUE(Exists(fs_.at("d/dir-synced"))) << "its directory was fsynced, so its name survives";
  EXPECT_EQ(ReadFile(fs_.at("d/dir-synced")), "") << "but its data was never fsynced";
  EXPECT_EQ(ReadFile(fs_.at("old")), "old-file") << "files older than the rules are not touched";

  // The list says what the rule does.
  auto list = fs_.Ctl({{"cmd", "list"}});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["rules"][1]["dir_sync"], true) << list->dump();
}

TEST_F(FaultsTest, LatencyIsSleptAndASlowFileDoesNotStallAnother) {
  WriteFile(fs_.src("slow"), "s");
  WriteFile(fs_.src("fast"), "f");
  Add({{"id", "lat"}, {"path", "slow"}, {"ops", {"read"}}, {"action", "latency"}, {"latency", "1500ms"}});
  std::atomic<bool> slow_done{false};
  const auto start = std::chrono::steady_clock::now();
  std::thread slow([&] {
    EXPECT_EQ(ReadAt(fs_.at("slow"), 1).data, "s");
    slow_done = true;
  });
  // Wait until the slow read is inside its sleep, then read the other file.
  while (Faults(fs_, "latency").empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(ReadAt(fs_.at("fast"), 1).data, "f");
  EXPECT_FALSE(slow_done.load()) << "the fast file waited for the slow one";
  slow.join();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
  EXPECT_EQ(Faults(fs_, "latency")[0]["latency_us"], 1500000);
}

TEST_F(FaultsTest, UniformAndExponentialLatencyStayInTheirBounds) {
  WriteFile(fs_.src("u"), "u");
  Add({{"id", "uni"}, {"path", "u"}, {"ops", {"getattr", "read"}}, {"action", "latency"}, {"dist", "uniform"},
       {"latency", "1ms"}, {"latency_max", "3ms"}});
  Add({{"id", "exp"}, {"path", "u"}, {"ops", {"read"}}, {"action", "latency"}, {"dist", "exponential"},
       {"latency", "1ms"}});
  for (int i = 0; i < 5; ++i) ReadAt(fs_.at("u"), 1);
  int uniform = 0;
  for (const json& l : Faults(fs_, "latency")) {
    if (l["rule"] == "uni") {
      ++uniform;
      EXPECT_GE(l["latency_us"], 1000);
      EXPECT_LE(l["latency_us"], 3000);
    } else {
      EXPECT_GE(l["latency_us"], 0);
    }
  }
  EXPECT_GE(uniform, 5);
}

TEST_F(FaultsTest, HangBlocksUntilReleased) {
  WriteFile(fs_.src("h"), "h");
  Add({{"id", "hang"}, {"path", "h"}, {"ops", {"read"}}, {"action", "hang"}});
  std::atomic<bool> done{false};
  std::thread reader([&] {
    EXPECT_EQ(ReadAt(fs_.at("h"), 1).data, "h");
    done = true;
  });
  json rules;
  for (int i = 0; i < 500; ++i) {
    rules = (*fs_.Ctl({{"cmd", "stats"}}))["rules"];
    if (rules[0]["hung"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(rules[0]["hung"], 1) << "the read never hung: " << rules.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(done.load()) << "a hung call returned before release";
  auto reply = fs_.Ctl({{"cmd", "release"}, {"id", "hang"}});
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ((*reply)["released"], 1);
  ASSERT_TRUE(fs_.Ctl({{"cmd", "remove"}, {"id", "hang"}}).ok());
  reader.join();
  EXPECT_TRUE(done.load());
}

TEST_F(FaultsTest, SeveralHungCallsDoNotStopOtherFiles) {
  // Each hung call holds one worker; the others (and new ones) keep serving everything else.
  constexpr int kHung = 6;
  WriteFile(fs_.src("h"), "h");
  for (int i = 0; i < 4; ++i) WriteFile(fs_.src("f" + std::to_string(i)), Pattern(300000, i));
  Add({{"id", "hang"}, {"path", "h"}, {"ops", {"read"}}, {"action", "hang"}});
  std::atomic<int> returned{0};
  std::vector<std::thread> hung;
  for (int i = 0; i < kHung; ++i) {
    hung.emplace_back([&] {
      EXPECT_EQ(ReadAt(fs_.at("h"), 1).data, "h");
      ++returned;
    });
  }
  json rules;
  for (int i = 0; i < 500; ++i) {
    rules = (*fs_.Ctl({{"cmd", "stats"}}))["rules"];
    if (rules[0]["hung"] == kHung) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(rules[0]["hung"], kHung) << "not every read hung: " << rules.dump();
  // Concurrent readers and writers of other files, and new files, all get through meanwhile.
  std::vector<std::thread> others;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    others.emplace_back([&, i] {
      if (ReadFile(fs_.at("f" + std::to_string(i))) == Pattern(300000, i)) ++ok;
      WriteFile(fs_.at("new" + std::to_string(i)), Pattern(70000, i + 10));
      if (ReadFile(fs_.src("new" + std::to_string(i))) == Pattern(70000, i + 10)) ++ok;
    });
  }
  for (auto& t : others) t.join();
  EXPECT_EQ(ok.load(), 8) << "reads or writes of other files went wrong while calls were hung";
  EXPECT_EQ(returned.load(), 0) << "a hung call returned before release";
  auto reply = fs_.Ctl({{"cmd", "release"}});
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ((*reply)["released"], kHung);
  ASSERT_TRUE(fs_.Ctl({{"cmd", "clear"}}).ok());
  for (auto& t : hung) t.join();
  EXPECT_EQ(returned.load(), kHung);
}

TEST_F(FaultsTest, MatchKindsNthEveryMaxHitsGlobAndOps) {
  WriteFile(fs_.src("a.blk"), "a");
  WriteFile(fs_.src("b.txt"), "b");
  Add({{"id", "third"}, {"path", "*.blk"}, {"ops", {"read"}}, {"action", "errno"}, {"nth", 3}});
  std::vector<int> errs;
  for (int i = 0; i < 5; ++i) errs.push_back(ReadAt(fs_.at("a.blk"), 1).err);
  EXPECT_EQ(errs, (std::vector<int>{0, 0, EIO, 0, 0}));
  EXPECT_EQ(ReadAt(fs_.at("b.txt"), 1).err, 0) << "the glob does not match b.txt";
  ASSERT_TRUE(fs_.Ctl({{"cmd", "clear"}}).ok());
  Add({{"id", "every2"}, {"path", "*.blk"}, {"ops", {"read"}}, {"action", "errno"}, {"every", 2}, {"max_hits", 2}});
  errs.clear();
  for (int i = 0; i < 7; ++i) errs.push_back(ReadAt(fs_.at("a.blk"), 1).err);
  EXPECT_EQ(errs, (std::vector<int>{0, EIO, 0, EIO, 0, 0, 0})) << "every 2nd call, at most 2 hits";
  EXPECT_EQ(WriteAt(fs_.at("a.blk"), "w").err, 0) << "a read-only rule leaves writes alone";
}

TEST_F(FaultsTest, RulesFollowRenamedPaths) {
  ASSERT_EQ(mkdir(fs_.at("d").c_str(), 0755), 0);
  WriteFile(fs_.at("d/f"), "f");
  EXPECT_EQ(ReadAt(fs_.at("d/f"), 1).data, "f");
  ASSERT_EQ(rename(fs_.at("d").c_str(), fs_.at("e").c_str()), 0);
  Add({{"id", "new-name"}, {"path", "e/f"}, {"ops", {"read"}}, {"action", "errno"}});
  EXPECT_EQ(ReadAt(fs_.at("e/f"), 1).err, EIO) << "the rule must see the file under its new path";
  auto hits = Faults(fs_, "errno");
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0]["path"], "e/f");
}

TEST_F(FaultsTest, TimeWindowOpensLater) {
  WriteFile(fs_.src("f"), "f");
  Add({{"id", "late"}, {"path", "f"}, {"ops", {"read"}}, {"action", "errno"}, {"from", "800ms"}, {"until", "60s"}});
  EXPECT_EQ(ReadAt(fs_.at("f"), 1).err, 0) << "before the window";
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  EXPECT_EQ(ReadAt(fs_.at("f"), 1).err, EIO) << "inside the window";
}

TEST_F(FaultsTest, DisableAndEnableSwitchAllRules) {
  WriteFile(fs_.src("f"), "f");
  Add({{"id", "e"}, {"path", "f"}, {"ops", {"read"}}, {"action", "errno"}});
  ASSERT_TRUE(fs_.Ctl({{"cmd", "disable"}}).ok());
  EXPECT_EQ(ReadAt(fs_.at("f"), 1).err, 0);
  ASSERT_TRUE(fs_.Ctl({{"cmd", "enable"}}).ok());
  EXPECT_EQ(ReadAt(fs_.at("f"), 1).err, EIO);
}

// The same operations under the same seed give the same faults, line for line.
std::vector<json> RunProbabilisticSequence(uint64_t seed) {
  FaultFsMount fs;
  MountOptions options;
  options.seed = seed;
  options.rules_yaml = R"(rules:
  - id: p-eio
    path: "*.blk"
    ops: [read]
    probability: 0.3
    action: errno
  - id: p-flip
    path: "*.blk"
    ops: [read]
    probability: 0.3
    action: flip_read_bits
    bits: 2
)";
  EXPECT_TRUE(fs.Start(options).ok());
  for (int i = 0; i < 4; ++i) WriteFile(fs.src(std::to_string(i) + ".blk"), Pattern(8192, i));
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 4; ++i) ReadAt(fs.at(std::to_string(i) + ".blk"), 8192);
  }
  std::vector<json> lines = fs.LogLines();
  for (json& l : lines) {
    l.erase("t_us");
    l.erase("wall_ms");
  }
  return lines;
}

TEST(FaultDeterminismTest, SameSeedSameOperationsSameFaults) {
  if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
  const auto a = RunProbabilisticSequence(1234);
  const auto b = RunProbabilisticSequence(1234);
  const auto c = RunProbabilisticSequence(99);
  ASSERT_GT(a.size(), 5u) << "the rules should have hit several times";
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c) << "another seed should give other faults";
}

}  // namespace
}  // namespace kvchaos::faultfs::testing
