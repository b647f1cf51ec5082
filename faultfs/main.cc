// The faultfs binary: mounts a fault-injecting mirror of SOURCE on MOUNTPOINT, or, as
// `faultfs ctl ...`, talks to a running one (ctl.h).
//
//   faultfs SOURCE MOUNTPOINT [--rules FILE] [--seed N] [--control SOCKET] [--log FILE]
//           [--cache targeted|none|always] [--threads N] [--spin-us N] [--no-splice] [-o FUSE_OPTS] [-f]
//
// Shutdown: SIGTERM, SIGINT or SIGHUP release every hung call, cut sleeps short, end the loop
// and unmount; `fusermount3 -u MOUNTPOINT` ends it the same way from the outside.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/common/logging.h"
#include "core/common/thread_util.h"
#include "core/common/version.h"
#include "faultfs/control_server.h"
#include "faultfs/ctl.h"
#include "faultfs/passthrough.h"
#include "faultfs/rule_parser.h"
#include "faultfs/worker_pool.h"

namespace kvchaos::faultfs {
namespace {

constexpr const char* kUsage =
    "usage: faultfs SOURCE MOUNTPOINT [--rules FILE] [--seed N] [--control SOCKET] [--log FILE]\n"
    "                [--cache targeted|none|always] [--threads N] [--spin-us N] [--no-splice] [-o FUSE_OPTS] [-f]\n"
    "       faultfs ctl SOCKET COMMAND [ARG]   (faultfs ctl help for the commands)\n"
    "       faultfs --version";

struct Args {
  std::string source, mountpoint, rules, control, log, fuse_opts;
  std::optional<uint64_t> seed;
  CacheMode cache = CacheMode::kTargeted;
  int threads = 16;
  int spin_us = WorkerPool::kDefaultSpinUs;
  bool splice = true;
  bool foreground = false;
};

Result<uint64_t> ParseU64(const std::string& flag, const std::string& text) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) {
    return Status::InvalidArgument(flag + ": '" + text + "' is not a non-negative integer");
  }
  return v;
}

Result<Args> ParseArgs(const std::vector<std::string>& argv) {
  Args a;
  std::vector<std::string> positional;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    auto value = [&](std::string* out) -> Status {
      if (i + 1 >= argv.size()) return Status::InvalidArgument(arg + " needs a value");
      *out = argv[++i];
      return Status::Ok();
    };
    std::string v;
    if (arg == "-f" || arg == "--foreground") {
      a.foreground = true;
    } else if (arg == "--no-splice") {
      a.splice = false;
    } else if (arg == "--rules") {
      KVCHAOS_RETURN_IF_ERROR(value(&a.rules));
    } else if (arg == "--control") {
      KVCHAOS_RETURN_IF_ERROR(value(&a.control));
    } else if (arg == "--log") {
      KVCHAOS_RETURN_IF_ERROR(value(&a.log));
    } else if (arg == "-o") {
      KVCHAOS_RETURN_IF_ERROR(value(&a.fuse_opts));
    } else if (arg == "--seed") {
      KVCHAOS_RETURN_IF_ERROR(value(&v));
      Result<uint64_t> seed = ParseU64("--seed", v);
      if (!seed.ok()) return seed.status();
      a.seed = *seed;
    } else if (arg == "--spin-us") {
      KVCHAOS_RETURN_IF_ERROR(value(&v));
      Result<uint64_t> n = ParseU64("--spin-us", v);
      if (!n.ok()) return n.status();
      if (*n > 1000) return Status::InvalidArgument("--spin-us: must be within 0..1000");
      a.spin_us = static_cast<int>(*n);
    } else if (arg == "--threads") {
      KVCHAOS_RETURN_IF_ERROR(value(&v));
      Result<uint64_t> n = ParseU64("--threads", v);
      if (!n.ok()) return n.status();
      if (*n < 1 || *n > 1024) return Status::InvalidArgument("--threads: must be within 1..1024");
      a.threads = static_cast<int>(*n);
    } else if (arg == "--cache") {
      KVCHAOS_RETURN_IF_ERROR(value(&v));
      Result<CacheMode> mode = CacheModeFromName(v);
      if (!mode.ok()) return Status::InvalidArgument("--cache: " + mode.status().message());
      a.cache = *mode;
    } else if (!arg.empty() && arg[0] == '-') {
      return Status::InvalidArgument("unknown option '" + arg + "'");
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) return Status::InvalidArgument("expected SOURCE and MOUNTPOINT");
  // Absolute paths: fuse_daemonize changes the directory to '/' (with -f too).
  for (int i = 0; i < 2; ++i) {
    char* real = realpath(positional[static_cast<size_t>(i)].c_str(), nullptr);
    if (real == nullptr) {
      return Status::IoError(std::string(i == 0 ? "SOURCE" : "MOUNTPOINT") + " '" + positional[static_cast<size_t>(i)] + "'", errno);
    }
    (i == 0 ? a.source : a.mountpoint) = real;
    std::free(real);
  }
  for (std::string* path : {&a.control, &a.log, &a.rules}) {
    if (path->empty() || path->front() == '/') continue;
    char* cwd = getcwd(nullptr, 0);
    if (cwd == nullptr) return Status::IoError("getcwd (to make '" + *path + "' absolute)", errno);
    *path = std::string(cwd) + "/" + *path;
    std::free(cwd);
  }
  return a;
}

void WakeHandler(int) {}

// Waits for SIGTERM/SIGINT/SIGHUP (blocked in every other thread) and turns one into a clean
// exit of the FUSE loop: hangs are released first, since a hung worker could not finish.
class SignalWatcher {
 public:
  SignalWatcher(fuse_session* se, RuleEngine& engine, WorkerPool& pool) : se_(se), engine_(engine), pool_(pool) {
    thread_ = std::thread([this] { Run(); });
  }
  ~SignalWatcher() {
    loop_done_.store(true);
    pthread_kill(thread_.native_handle(), SIGTERM);
    thread_.join();
  }
  void LoopDone() { loop_done_.store(true); }

 private:
  void Run() {
    SetCurrentThreadName("faultfs_sig");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    int sig = 0;
    sigwait(&set, &sig);
    if (loop_done_.load()) return;
    spdlog::info("faultfs: signal {} received, unmounting", sig);
    engine_.Shutdown();
    fuse_session_exit(se_);
    // Workers sleep in read() on /dev/fuse: interrupt them until the loop notices the exit.
    while (!loop_done_.load()) {
      pool_.Interrupt();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  fuse_session* se_;
  RuleEngine& engine_;
  WorkerPool& pool_;
  std::atomic<bool> loop_done_{false};
  std::thread thread_;
};

int Mount(const Args& a) {
  InitLogging();
  RulesFile rules;
  if (!a.rules.empty()) {
    Result<RulesFile> loaded = LoadRulesFile(a.rules);
    if (!loaded.ok()) {
      std::cerr << "faultfs: " << loaded.status().message() << "\n";
      return 2;
    }
    rules = std::move(*loaded);
  }
  const uint64_t seed = a.seed.value_or(rules.seed.value_or(0));
  Result<std::unique_ptr<FaultLog>> log = FaultLog::Open(a.log);
  if (!log.ok()) {
    std::cerr << "faultfs: " << log.status().ToString() << "\n";
    return 2;
  }
  RuleEngine engine(seed, log->get());
  if (Status s = engine.Add(rules.rules); !s.ok()) {
    std::cerr << "faultfs: " << s.message() << "\n";
    return 2;
  }
  // Everything that can fail on the user's input is checked here, before the fork of
  // fuse_daemonize: after it the shell has its exit status 0 and stderr is /dev/null.
  FaultFs fs(FsOptions{a.source, a.cache, a.splice}, engine);
  if (Status s = fs.Open(); !s.ok()) {
    std::cerr << "faultfs: " << s.ToString() << "\n";
    return 2;
  }
  ControlCommands commands(engine, [&fs] { return fs.Crash(); });
  ControlServer control(commands);
  if (!a.control.empty()) {
    if (Status s = control.Listen(a.control); !s.ok()) {
      std::cerr << "faultfs: " << s.ToString() << "\n";
      return 2;
    }
  }

  std::string opts = "fsname=faultfs:" + a.source + ",subtype=faultfs";
  if (geteuid() == 0) opts += ",allow_other,default_permissions";
  if (!a.fuse_opts.empty()) opts += "," + a.fuse_opts;
  std::vector<std::string> fuse_argv = {"faultfs", "-o", opts};
  std::vector<char*> cargv;
  for (auto& s : fuse_argv) cargv.push_back(s.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(cargv.size()), cargv.data());
  fuse_session* se = fuse_session_new(&args, &FaultFs::Ops(), sizeof(fuse_lowlevel_ops), &fs);
  fuse_opt_free_args(&args);  // the session keeps what it needs; libfuse may have grown `args`
  if (se == nullptr) {
    std::cerr << "faultfs: cannot create the FUSE session (bad -o options?)\n";
    return 2;
  }
  // The shutdown signals are blocked from before the mount (every thread and the daemon's fork
  // inherit the mask): one that arrives while the mount is still being set up waits for the
  // SignalWatcher's sigwait and unmounts cleanly, instead of killing the process and leaving a
  // dead mount behind (a test's PR_SET_PDEATHSIG SIGTERM can come that early).
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, nullptr);
  if (fuse_session_mount(se, a.mountpoint.c_str()) != 0) {
    std::cerr << "faultfs: cannot mount on '" << a.mountpoint << "'\n";
    fuse_session_destroy(se);
    return 2;
  }
  // Forks here when not in the foreground: before any thread exists.
  if (fuse_daemonize(a.foreground ? 1 : 0) != 0) {
    fuse_session_unmount(se);
    fuse_session_destroy(se);
    return 2;
  }
  if (Status s = fs.OpenProcessFds(); !s.ok()) {
    spdlog::error("faultfs: {}", s.ToString());
    fuse_session_unmount(se);
    fuse_session_destroy(se);
    return 2;
  }
  fs.set_session(se);

  struct sigaction wake {};
  wake.sa_handler = WakeHandler;
  sigaction(SIGUSR1, &wake, nullptr);  // no SA_RESTART: it must interrupt read() on /dev/fuse
  signal(SIGPIPE, SIG_IGN);

  control.Serve();
  int rc = 0;
  {
    WorkerPool pool(se, a.threads, a.spin_us);
    SignalWatcher watcher(se, engine, pool);
    spdlog::info("faultfs: {} mounted on {} (seed {}, {} rules, cache {})", a.source, a.mountpoint, seed,
                 rules.rules.size(), CacheModeName(a.cache));
    rc = pool.Run() == 0 ? 0 : 1;
    watcher.LoopDone();
    engine.Shutdown();
  }
  control.Stop();
  fs.set_session(nullptr);
  fuse_session_unmount(se);
  fuse_session_destroy(se);
  spdlog::info("faultfs: unmounted {}", a.mountpoint);
  return rc;
}

}  // namespace
}  // namespace kvchaos::faultfs

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "ctl") return kvchaos::faultfs::RunCtl({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "--version") {
    std::cout << "faultfs " << kvchaos::kVersion << " (build " << kvchaos::kBuildId << ")\n";
    return 0;
  }
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::cout << kvchaos::faultfs::kUsage << "\n";
    return args.empty() ? 2 : 0;
  }
  auto parsed = kvchaos::faultfs::ParseArgs(args);
  if (!parsed.ok()) {
    std::cerr << "faultfs: " << parsed.status().ToString() << "\n" << kvchaos::faultfs::kUsage << "\n";
    return 2;
  }
  return kvchaos::faultfs::Mount(*parsed);
}
