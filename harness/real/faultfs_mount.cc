// faultfs mounts of a real-mode run; see faultfs_mount.h.
#include "harness/real/faultfs_mount.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/json_text.h"

namespace kvchaos::harness::real {
namespace {

namespace fs = std::filesystem;

bool Executable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); }

// /proc/self/mountinfo escapes blanks in paths as \040 and so on.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string FindOnPath(const std::string& name) {
  std::vector<std::string> dirs = {"/usr/bin", "/bin", "/usr/local/bin"};
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');) dirs.insert(dirs.end() - 3, d);
  }
  for (const std::string& d : dirs) {
    if (!d.empty() && ::access((d + "/" + name).c_str(), X_OK) == 0) return d + "/" + name;
  }
  return "";
}

// Runs fusermount3 with `flags` on `mountpoint`; true on exit status 0.
bool Fusermount(const std::string& flags, const std::string& mountpoint) {
  const std::string binary = FindOnPath("fusermount3");
  if (binary.empty()) return false;
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, 1);
      ::dup2(null_fd, 2);
    }
    ::execl(binary.c_str(), "fusermount3", flags.c_str(), mountpoint.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

Result<std::string> FindFaultfs(const std::string& explicit_path) {
  std::vector<std::string> looked;
  if (!explicit_path.empty()) {
    if (Executable(explicit_path)) return explicit_path;
    return Status::NotFound("--faultfs " + explicit_path + ": not an executable file");
  }
  if (const char* env = std::getenv("KVCHAOS_FAULTFS"); env != nullptr && *env != '\0') {
    if (Executable(env)) return std::string(env);
    return Status::NotFound(std::string("KVCHAOS_FAULTFS=") + env + ": not an executable file");
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path dir = self.parent_path();
    // Build tree: <build>/tools/kvchaos/kvchaos and <build>/faultfs/faultfs; install tree: bin/.
    for (const fs::path& candidate : {dir.parent_path().parent_path() / "faultfs" / "faultfs", dir / "faultfs"}) {
      if (Executable(candidate)) return candidate.string();
      looked.push_back(candidate.string());
    }
  }
  std::string where;
  for (const std::string& l : looked) where += (where.empty() ? "" : ", ") + l;
  return Status::NotFound("faultfs binary not found: no --faultfs, no KVCHAOS_FAULTFS, and not at " + where +
                          " (build the faultfs target or pass --faultfs PATH)");
}

bool IsMountPoint(const std::string& path) {
  const std::string want = fs::path(path).lexically_normal().string();
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mount;
    if (fields >> id >> parent >> devno >> root >> mount && Unescape(mount) == want) return true;
  }
  return false;
}

std::string FuseUnavailableReason() {
  if (::access("/dev/fuse", R_OK | W_OK) != 0) return "/dev/fuse is missing or not usable (" + std::string(std::strerror(errno)) + ")";
  if (FindOnPath("fusermount3").empty()) return "fusermount3 is not installed (Debian package fuse3)";
  return "";
}

FaultfsMount::FaultfsMount(FaultfsMountSpec spec)
    : spec_(std::move(spec)),
      child_(ChildSpec{"faultfs-" + spec_.name,
                       {spec_.binary, spec_.source, spec_.mountpoint, "--control", spec_.control, "--log",
                        spec_.fault_log, "--seed", std::to_string(spec_.seed), "-f"},
                       spec_.log_path,
                       SIGTERM}) {}

FaultfsMount::~FaultfsMount() { Unmount(); }

Status FaultfsMount::Mount(Duration timeout) {
  std::error_code ec;
  fs::create_directories(spec_.mountpoint, ec);
  if (ec) return Status::IoError("mount point " + spec_.mountpoint + ": " + ec.message(), ec.value());
  if (Status s = child_.Start(); !s.ok()) return s;
  Runtime& rt = Runtime::Real();
  const MonoTime deadline = rt.Now() + timeout;
  while (rt.Now() < deadline) {
    if (IsMountPoint(spec_.mountpoint) && Control({{"cmd", "list"}}).ok()) return Status::Ok();
    if (StopRequested()) {
      Unmount();
      return Interrupted("waiting for the faultfs mount of " + spec_.name);
    }
    if (!child_.Running()) {
      return Status::Unavailable("faultfs for backend " + spec_.name + " " + child_.ExitDescription() +
                                 " before its mount appeared (log: " + spec_.log_path + ")");
    }
    rt.SleepFor(std::chrono::milliseconds(20));
  }
  Unmount();
  return Status::Timeout("faultfs mount " + spec_.mountpoint + " not visible within " +
                         std::to_string(ToMillis(timeout)) + " ms (log: " + spec_.log_path + ")");
}

Result<nlohmann::json> FaultfsMount::Control(const nlohmann::json& request) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError("socket: " + std::string(std::strerror(errno)), errno);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (spec_.control.size() >= sizeof addr.sun_path) {
    ::close(fd);
    return Status::InvalidArgument("control socket path too long: " + spec_.control);
  }
  std::memcpy(addr.sun_path, spec_.control.c_str(), spec_.control.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::Unavailable("faultfs control " + spec_.control + ": " + std::strerror(err));
  }
  const std::string line = DumpJson(request) + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      ::close(fd);
      return Status::Unavailable("faultfs control " + spec_.control + ": send failed");
    }
    sent += static_cast<size_t>(n);
  }
  std::string reply;
  char buf[4096];
  while (reply.find('\n') == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) break;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  const nlohmann::json j = nlohmann::json::parse(reply.substr(0, reply.find('\n')), nullptr, false);
  if (!j.is_object()) return Status::Unavailable("faultfs control " + spec_.control + ": no reply to " + DumpJson(request));
  if (!j.value("ok", false)) {
    return Status::InvalidArgument("faultfs " + spec_.name + " refused " + DumpJson(request) + ": " +
                                   j.value("error", std::string("?")));
  }
  return j;
}

void FaultfsMount::Unmount() {
  if (child_.Running()) {
    // Hung calls keep the kernel from unmounting; faultfs releases them on SIGTERM too, but a
    // release first makes the callers (store workers) return at once.
    (void)Control({{"cmd", "release"}});
    child_.Stop(SIGTERM, std::chrono::seconds(5));
  }
  if (IsMountPoint(spec_.mountpoint) && !Fusermount("-u", spec_.mountpoint)) Fusermount("-uz", spec_.mountpoint);
}

}  // namespace kvchaos::harness::real
