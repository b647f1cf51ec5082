// The test mount helper; see mount_fixture.h.
#include "faultfs/tests/mount_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "faultfs/control_server.h"

namespace kvchaos::faultfs::testing {
namespace {

int RunQuiet(const std::vector<std::string>& argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool WaitExit(pid_t pid, std::chrono::milliseconds timeout, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

bool IsMountPoint(const std::string& path) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, point;
    fields >> id >> parent >> devno >> root >> point;
    if (point == path) return true;
  }
  return false;
}

std::pair<int, std::string> Shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string FuseSkipReason() {
  if (access("/dev/fuse", R_OK | W_OK) != 0) return "/dev/fuse is missing or not accessible";
  if (RunQuiet({"sh", "-c", "command -v fusermount3"}) != 0) return "fusermount3 is not installed";
  return "";
}

FaultFsMount::FaultFsMount() : dir_(std::make_unique<kvchaos::testing::TempDir>("faultfs")) {
  mnt_ = dir_->str() + "/mnt";
  socket_ = dir_->str() + "/ctl.sock";
  log_ = dir_->str() + "/faults.jsonl";
  stderr_ = dir_->str() + "/stderr.txt";
  mkdir(mnt_.c_str(), 0755);
}

FaultFsMount::~FaultFsMount() {
  // A clean exit is part of every test: a sanitizer report or a crash of faultfs shows here.
  const int status = Stop();
  if (status != -1 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    ADD_FAILURE() << "faultfs did not exit cleanly (status " << status << "): " << Stderr();
  }
  if (IsMountPoint(mnt_)) RunQuiet({"fusermount3", "-u", "-z", mnt_});
}

Status FaultFsMount::Start(const MountOptions& options) {
  source_ = options.source.empty() ? dir_->str() + "/src" : options.source;
  mkdir(source_.c_str(), 0755);
  std::vector<std::string> argv = {KVCHAOS_FAULTFS_BINARY, source_, mnt_, "-f", "--control", socket_,
                                   "--log", log_, "--cache", options.cache};
  if (!options.rules_yaml.empty()) {
    const std::string rules = dir_->str() + "/rules.yaml";
    WriteFile(rules, options.rules_yaml);
    argv.push_back("--rules");
    argv.push_back(rules);
  }
  if (options.seed) {
    argv.push_back("--seed");
    argv.push_back(std::to_string(*options.seed));
  }
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) return Status::IoError("fork", errno);
  if (pid_ == 0) {
    // faultfs goes when the test process does, however it ends (a ctest timeout kills it with
    // SIGKILL, and no destructor runs): SIGTERM makes it unmount. The check after prctl covers a
    // parent that died before it.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    const int err = open(stderr_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, 2);
    dup2(err, 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::Internal("faultfs exited before mounting: " + Stderr());
    }
    struct stat st {};
    if (IsMountPoint(mnt_) && stat(socket_.c_str(), &st) == 0) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Status::Timeout("faultfs did not mount within 10 s: " + Stderr());
}

int FaultFsMount::Stop(int sig) {
  if (pid_ <= 0) return -1;
  int status = 0;
  kill(pid_, sig);
  if (!WaitExit(pid_, std::chrono::seconds(10), &status)) {
    RunQuiet({"fusermount3", "-u", "-z", mnt_});
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    status = -1;
  }
  pid_ = -1;
  return status;
}

int FaultFsMount::WaitExited(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  int status = 0;
  if (!WaitExit(pid_, timeout, &status)) return -1;
  pid_ = -1;
  return status;
}

bool FaultFsMount::Mounted() const { return IsMountPoint(mnt_); }

Result<nlohmann::json> FaultFsMount::Ctl(const nlohmann::json& request) const {
  Result<std::string> reply = ControlRequest(socket_, request.dump(), std::chrono::seconds(10));
  if (!reply.ok()) return reply.status();
  return nlohmann::json::parse(*reply);
}

Status FaultFsMount::AddRule(const nlohmann::json& rule) const {
  Result<nlohmann::json> reply = Ctl({{"cmd", "add"}, {"rule", rule}});
  if (!reply.ok()) return reply.status();
  if (!reply->value("ok", false)) return Status::InvalidArgument(reply->dump());
  return Status::Ok();
}

std::vector<nlohmann::json> FaultFsMount::LogLines() const {
  std::vector<nlohmann::json> lines;
  std::ifstream in(log_);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

std::string FaultFsMount::Stderr() const { return ReadFile(stderr_); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

}  // namespace kvchaos::faultfs::testing
