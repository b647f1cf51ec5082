#include "core/common/thread_util.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <charconv>

namespace kvchaos {
namespace {

constexpr size_t kMaxThreadNameLength = 15;

std::string& CachedName() {
  thread_local std::string name;
  return name;
}

}  // namespace

void SetCurrentThreadName(std::string_view name) {
  // Built from pointer + length: gcc 12 -O3 warns falsely (-Wrestrict) on substr here.
  std::string truncated(name.data(), std::min(name.size(), kMaxThreadNameLength));
  pthread_setname_np(pthread_self(), truncated.c_str());
  CachedName() = std::move(truncated);
}

const std::string& CurrentThreadName() {
  std::string& cached = CachedName();
  if (cached.empty()) {
    char buf[32] = {};
    if (pthread_getname_np(pthread_self(), buf, sizeof(buf)) == 0) cached = buf;
    if (cached.empty()) cached = "?";
  }
  return cached;
}

Status SetCurrentThreadAffinity(const std::vector<int>& cpus) {
  if (cpus.empty()) return Status::InvalidArgument("cpu affinity: the CPU list is empty");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      return Status::InvalidArgument("cpu affinity: CPU " + std::to_string(cpu) + " is out of range");
    }
    CPU_SET(cpu, &set);
  }
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) return Status::IoError("pthread_setaffinity_np failed", rc);
  return Status::Ok();
}

std::vector<int> CurrentThreadAffinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  auto parse_int = [](std::string_view s, int* out) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && ptr == s.data() + s.size() && *out >= 0 && *out < CPU_SETSIZE;
  };
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view part = text.substr(start, comma - start);
    size_t dash = part.find('-');
    int lo = 0;
    int hi = 0;
    bool ok = dash == std::string_view::npos
                  ? parse_int(part, &lo) && parse_int(part, &hi)
                  : parse_int(part.substr(0, dash), &lo) && parse_int(part.substr(dash + 1), &hi) && lo <= hi;
    if (!ok) {
      return Status::InvalidArgument("cpu list '" + std::string(text) + "': bad part '" + std::string(part) + "'");
    }
    for (int cpu = lo; cpu <= hi; ++cpu) cpus.push_back(cpu);
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

}  // namespace kvchaos
