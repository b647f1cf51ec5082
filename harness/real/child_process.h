// ChildProcess: one child of a real-mode run (redis-server, `kvchaos node`, faultfs), started with
// fork/exec so that it can be tied to the runner's life: its stdout and stderr go to a log file in
// the run directory, it gets its own process group (a Ctrl-C on the terminal reaches the runner
// only, which then tears everything down in order), and PR_SET_PDEATHSIG makes the kernel signal
// it when the runner dies, even by SIGKILL.
//
// PR_SET_PDEATHSIG fires when the *thread* that forked the child exits, so a run forks every child
// from its own run thread, which outlives them all. Not thread-safe: one owner drives it.
// (testing/redis_server.cc could be rebuilt on this class; it is kept apart because production
// code must not link kvchaos_testing.)
#pragma once

#include <sys/types.h>

#include <atomic>
#include <csignal>
#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos::harness::real {

// The runner's stop request (SIGINT/SIGTERM), which every wait of real mode (a child coming up,
// a leader being elected) checks so an interrupted run tears down at once. Set once at start.
void SetStopFlag(const std::atomic<bool>* flag);
bool StopRequested();
// The Cancelled status such a wait returns.
Status Interrupted(const std::string& what);

// The executable `name` on PATH, then in /usr/bin and /usr/local/bin; "" when absent.
std::string FindProgram(const std::string& name);

struct ChildSpec {
  std::string name;               // "redis", "node-1", "faultfs-p1": for messages
  std::vector<std::string> argv;  // argv[0] is the executable's path
  std::string log_path;           // stdout and stderr, appended (a restart keeps the old lines)
  int death_signal = SIGKILL;     // sent by the kernel when the runner thread dies
  std::vector<std::string> env;   // KEY=VALUE entries added to (or replacing) the runner's environment
};

class ChildProcess {
 public:
  ChildProcess() = default;
  explicit ChildProcess(ChildSpec spec) : spec_(std::move(spec)) {}
  ~ChildProcess();  // Kill()
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts the child (again, after it exited). Fails when it is already running or fork fails;
  // an exec failure shows up as the child exiting with 127 (see its log).
  Status Start();
  // Sends `sig`; false when the child is not running.
  bool Signal(int sig);
  // Sends `sig` (after SIGCONT, so a stopped child can act on it) and waits up to `grace`; then
  // SIGKILL. Returns once the child is reaped.
  void Stop(int sig, Duration grace);
  void Kill() { Stop(SIGKILL, Duration::zero()); }
  // Reaps the child if it has exited; true while it runs (stopped counts as running).
  bool Running();
  // "exited with 3", "killed by signal 9", "running" — for error messages.
  std::string ExitDescription() const;

  pid_t pid() const { return pid_; }
  const ChildSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  const std::string& log_path() const { return spec_.log_path; }

 private:
  bool Reap(bool block);
  ChildSpec spec_;
  pid_t pid_ = -1;
  int last_status_ = -1;  // waitpid status of the last exit; -1 when none yet
};

}  // namespace kvchaos::harness::real
