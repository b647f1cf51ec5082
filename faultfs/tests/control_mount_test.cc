// The control socket and the process lifecycle of a real faultfs: protocol errors change
// nothing, `faultfs ctl` exit codes, clean shutdown on SIGTERM with a hung call and on
// fusermount3 -u, and bad command lines refused before mounting.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "faultfs/control_server.h"
#include "faultfs/tests/mount_fixture.h"

namespace kvchaos::faultfs::testing {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

class ControlMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
    Status s = fs_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  FaultFsMount fs_;
};

TEST_F(ControlMountTest, ProtocolErrorsOverTheSocketChangeNothing) {
  ASSERT_TRUE(fs_.AddRule({{"id", "keep"}, {"path", "k"}, {"action", "errno"}}).ok());
  for (const std::string& line : {std::string("garbage"), std::string(R"({"cmd":"nope"})"),
                                  std::string(R"({"cmd":"add","rule":{"id":"x","action":"errno","every":0}})"),
                                  std::string(R"({"cmd":"remove","id":"ghost"})")}) {
    Result<std::string> reply = ControlRequest(fs_.socket(), line);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    json j = json::parse(*reply);
    EXPECT_FALSE(j["ok"]) << line;
    EXPECT_FALSE(j["error"].get<std::string>().empty()) << line;
  }
  auto list = fs_.Ctl({{"cmd", "list"}});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["rules"].size(), 1u) << list->dump();
  EXPECT_EQ((*list)["rules"][0]["id"], "keep");
}

TEST_F(ControlMountTest, BytesThatAreNotUtf8OnTheSocketGetAnErrorAndTheMountStaysAlive) {
  // One such byte used to abort faultfs (nlohmann type_error.316) and leave a dead mount.
  WriteFile(fs_.src("f"), "data");
  for (const std::string& line : {std::string("{\"cmd\":\"remove\",\"id\":\"\xFF\"}"), std::string("\xC3\xA9"),
                                  std::string("{\"cmd\":\"list\",\"cmd\":\"clear\"}")}) {
    Result<std::string> reply = ControlRequest(fs_.socket(), line);
    ASSERT_TRUE(reply.ok()) << "faultfs stopped answering: " << reply.status().ToString() << "\n" << fs_.Stderr();
    json j = json::parse(*reply);
    EXPECT_FALSE(j["ok"]) << line;
  }
  EXPECT_TRUE(fs_.Mounted());
  EXPECT_EQ(ReadFile(fs_.at("f")), "data") << "the mount must keep serving";
  EXPECT_TRUE(fs_.Ctl({{"cmd", "list"}}).ok());
}

TEST_F(ControlMountTest, AFaultOnAFileNameThatIsNotUtf8IsLogged) {
  // File names are bytes; the JSON fault log must not abort on one.
  ASSERT_TRUE(fs_.AddRule({{"id", "all"}, {"ops", {"open"}}, {"action", "errno"}, {"errno", "EIO"}}).ok());
  WriteFile(fs_.src("odd\xFF.bin"), "x");
  EXPECT_EQ(open(fs_.at("odd\xFF.bin").c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, EIO);
  EXPECT_TRUE(fs_.Mounted()) << fs_.Stderr();
  const std::vector<json> log = fs_.LogLines();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["path"], "odd\xEF\xBF\xBD.bin") << "the byte is replaced by U+FFFD in the log";
}

TEST_F(ControlMountTest, SeveralRequestsOnOneConnectionGetOneReplyEach) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", fs_.socket().c_str());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string requests = "{\"cmd\":\"list\"}\n{\"cmd\":\"bogus\"}\n{\"cmd\":\"stats\"}\n";
  ASSERT_EQ(write(fd, requests.data(), requests.size()), static_cast<ssize_t>(requests.size()));
  std::string got;
  char buf[4096];
  while (std::count(got.begin(), got.end(), '\n') < 3) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    ASSERT_GT(n, 0);
    got.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  EXPECT_THAT(got, HasSubstr("\"rules\":[]"));
  EXPECT_THAT(got, HasSubstr("unknown cmd 'bogus'"));
  EXPECT_THAT(got, HasSubstr("\"faults\":0"));
}

TEST_F(ControlMountTest, AControlClientThatNeverReadsHoldsUpNeitherTheMountNorItsShutdown) {
  WriteFile(fs_.src("f"), "data");
  const int hog = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", fs_.socket().c_str());
  ASSERT_EQ(connect(hog, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string line = "{\"cmd\":\"stats\"}\n";
  for (int stalls = 0; stalls < 10;) {  // until the server stops taking our requests
    if (send(hog, line.data(), line.size(), MSG_NOSIGNAL) > 0) continue;
    pollfd p{hog, POLLOUT, 0};
    if (poll(&p, 1, 100) == 0) ++stalls;
  }
  EXPECT_EQ(ReadFile(fs_.at("f")), "data");
  auto list = fs_.Ctl({{"cmd", "list"}});
  EXPECT_TRUE(list.ok()) << "another control client must be served";
  const int status = fs_.Stop(SIGTERM);  // with the hog still connected
  close(hog);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "faultfs did not exit on SIGTERM while a control client left its replies unread (status " << status << ")";
  EXPECT_FALSE(fs_.Mounted());
}

TEST_F(ControlMountTest, CtlCommandLineExitCodes) {
  const std::string ctl = std::string(KVCHAOS_FAULTFS_BINARY) + " ctl " + fs_.socket();
  auto [rc, out] = Shell(ctl + " add '{\"id\":\"c\",\"action\":\"errno\",\"errno\":\"EIO\"}'");
  EXPECT_EQ(rc, 0) << out;
  std::tie(rc, out) = Shell(ctl + " list");
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("\"id\":\"c\""));
  std::tie(rc, out) = Shell(ctl + " remove ghost");
  EXPECT_EQ(rc, 1) << "an error reply exits 1";
  EXPECT_THAT(out, HasSubstr("no rule with id 'ghost'"));
  std::tie(rc, out) = Shell(ctl + " frobnicate");
  EXPECT_EQ(rc, 2) << "bad usage exits 2";
  std::tie(rc, out) = Shell(std::string(KVCHAOS_FAULTFS_BINARY) + " ctl /nonexistent.sock list");
  EXPECT_EQ(rc, 2);
  EXPECT_THAT(out, HasSubstr("cannot connect"));
}

TEST_F(ControlMountTest, SigtermWithAHungCallUnmountsCleanly) {
  WriteFile(fs_.src("h"), "h");
  ASSERT_TRUE(fs_.AddRule({{"id", "hang"}, {"path", "h"}, {"ops", {"read"}}, {"action", "hang"}}).ok());
  std::atomic<bool> done{false};
  std::thread reader([&] {
    const int fd = open(fs_.at("h").c_str(), O_RDONLY);
    char c;
    if (fd >= 0) {
      (void)!read(fd, &c, 1);
      close(fd);
    }
    done = true;
  });
  for (int i = 0; i < 500; ++i) {
    if ((*fs_.Ctl({{"cmd", "stats"}}))["rules"][0]["hung"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const int status = fs_.Stop(SIGTERM);
  reader.join();
  EXPECT_TRUE(done.load());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << ": " << fs_.Stderr();
  EXPECT_FALSE(fs_.Mounted()) << "SIGTERM must unmount";
  EXPECT_EQ(ReadFile(fs_.src("h")), "h") << "the source is untouched";
}

TEST_F(ControlMountTest, SigintUnmountsCleanly) {
  WriteFile(fs_.at("f"), "data");
  const int status = fs_.Stop(SIGINT);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << ": " << fs_.Stderr();
  EXPECT_FALSE(fs_.Mounted()) << "SIGINT must unmount";
  EXPECT_EQ(ReadFile(fs_.src("f")), "data");
}

TEST_F(ControlMountTest, FusermountUnmountEndsTheProcess) {
  ASSERT_EQ(Shell("fusermount3 -u " + fs_.mnt()).first, 0);
  const int status = fs_.WaitExited(std::chrono::seconds(5));
  ASSERT_NE(status, -1) << "faultfs kept running after fusermount3 -u";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << fs_.Stderr();
  EXPECT_FALSE(fs_.Mounted());
}

TEST(FaultFsCommandLineTest, BadRulesFileIsRefusedWithFileLineAndKey) {
  if (std::string why = FuseSkipReason(); !why.empty()) GTEST_SKIP() << why;
  FaultFsMount fs;
  MountOptions options;
  options.rules_yaml = "rules:\n  - id: a\n    action: errno\n    errno: EWHAT\n";
  Status s = fs.Start(options);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("rules.yaml:4: rules[0].errno: unknown errno 'EWHAT'"));
  EXPECT_FALSE(fs.Mounted());
  FaultFsMount odd;
  options.rules_yaml = "rules:\n  - id: \"r\xFF\"\n    action: errno\n";
  s = odd.Start(options);
  ASSERT_FALSE(s.ok()) << "a rule id that is not UTF-8 used to mount, then abort at the first fault";
  EXPECT_THAT(s.message(), HasSubstr("rules.yaml:2: rules[0].id: the value is not valid UTF-8 (byte 0xFF at offset 1)"));
  EXPECT_FALSE(odd.Mounted());
  auto [rc, out] = Shell(std::string(KVCHAOS_FAULTFS_BINARY) + " /nonexistent-src /tmp --cache sometimes");
  EXPECT_EQ(rc, 2);
  EXPECT_THAT(out, HasSubstr("--cache: unknown cache mode 'sometimes'"));
  std::tie(rc, out) = Shell(std::string(KVCHAOS_FAULTFS_BINARY) + " /nonexistent-src /tmp --spin-us 5000");
  EXPECT_EQ(rc, 2);
  EXPECT_THAT(out, HasSubstr("--spin-us: must be within 0..1000"));
}

}  // namespace
}  // namespace kvchaos::faultfs::testing
