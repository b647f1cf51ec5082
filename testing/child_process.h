// A server process started by a test: forked and exec'd with its output appended to a log file,
// and killed (SIGCONT first, in case it was paused, then SIGKILL) and reaped when the object goes
// away, even when the test fails. RedisServer and EtcdCluster start theirs through it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace kvchaos::testing {

class ChildProcess {
 public:
  // Starts argv[0] (an absolute path) with `argv`; stdout and stderr go to `log_path`.
  // Throws std::runtime_error when fork fails.
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Whether it has exited (it is reaped then); never blocks.
  bool Exited();
  // SIGSTOP / SIGCONT: it stops answering while its sockets stay open (an outage).
  void Pause();
  void Resume();
  // SIGKILL and reap; nothing when it has exited already.
  void Kill();

 private:
  pid_t pid_ = -1;
};

// The first of `candidates` that is an executable file, or "".
std::string FindExecutable(const std::vector<std::string>& candidates);

}  // namespace kvchaos::testing
