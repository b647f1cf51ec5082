// Child processes of a real-mode run; see child_process.h.
#include "harness/real/child_process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace kvchaos::harness::real {
namespace {
std::atomic<const std::atomic<bool>*> g_stop_flag{nullptr};

// The runner's environment with `extra`'s KEY=VALUE entries replacing those of the same key.
std::vector<std::string> MergedEnvironment(const std::vector<std::string>& extra) {
  const auto key_of = [](const std::string& e) { return e.substr(0, e.find('=')); };
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& x) { return key_of(x) == key_of(entry); });
    if (!replaced) out.push_back(entry);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}
}  // namespace

void SetStopFlag(const std::atomic<bool>* flag) { g_stop_flag = flag; }

bool StopRequested() {
  const std::atomic<bool>* flag = g_stop_flag.load();
  return flag != nullptr && flag->load();
}

std::string FindProgram(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');) {
      if (!d.empty()) dirs.push_back(d);
    }
  }
  dirs.push_back("/usr/bin");
  dirs.push_back("/usr/local/bin");
  for (const std::string& d : dirs) {
    const std::string candidate = d + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

Status Interrupted(const std::string& what) {
  return Status(StatusCode::kCancelled, what + ": interrupted (the runner was asked to stop)");
}

ChildProcess::~ChildProcess() { Kill(); }

Status ChildProcess::Start() {
  if (Running()) return Status::Internal(spec_.name + " is already running (pid " + std::to_string(pid_) + ")");
  if (spec_.argv.empty()) return Status::InvalidArgument(spec_.name + ": no command");
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls are allowed (other threads may hold malloc's locks).
  std::vector<char*> argv;
  for (std::string& a : spec_.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = MergedEnvironment(spec_.env);
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  const char* log = spec_.log_path.c_str();
  const int death_signal = spec_.death_signal;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return Status::IoError("fork for " + spec_.name + ": " + std::strerror(errno), errno);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, death_signal);
    if (::getppid() != parent) ::_exit(126);  // the runner died before prctl took effect
    ::setpgid(0, 0);
    const int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    // Signals the runner ignores or handles must not leak into the child as ignored.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  pid_ = pid;
  return Status::Ok();
}

bool ChildProcess::Reap(bool block) {
  if (pid_ <= 0) return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    last_status_ = r == pid_ ? status : -1;
    pid_ = -1;
    return true;
  }
  return false;
}

bool ChildProcess::Running() { return pid_ > 0 && !Reap(false); }

bool ChildProcess::Signal(int sig) {
  if (!Running()) return false;
  return ::kill(pid_, sig) == 0;
}

void ChildProcess::Stop(int sig, Duration grace) {
  if (!Running()) return;
  if (sig != SIGKILL) {
    ::kill(pid_, SIGCONT);
    ::kill(pid_, sig);
    Runtime& rt = Runtime::Real();
    const MonoTime deadline = rt.Now() + grace;
    while (rt.Now() < deadline) {
      if (Reap(false)) return;
      rt.SleepFor(std::chrono::milliseconds(10));
    }
  }
  ::kill(pid_, SIGKILL);
  ::kill(pid_, SIGCONT);
  Reap(true);
}

std::string ChildProcess::ExitDescription() const {
  if (pid_ > 0) return "running";
  if (last_status_ < 0) return "not started";
  if (WIFEXITED(last_status_)) return "exited with " + std::to_string(WEXITSTATUS(last_status_));
  if (WIFSIGNALED(last_status_)) return "killed by signal " + std::to_string(WTERMSIG(last_status_));
  return "ended";
}

}  // namespace kvchaos::harness::real
