// DirectorySyncer: group commit of directory fsyncs (see directory_syncer.h).
#include "core/store/directory_syncer.h"

#include <fcntl.h>

#include <cerrno>
#include <map>
#include <utility>

#include <spdlog/spdlog.h>

namespace kvchaos::store {

Status SyncDirectory(FileOps& ops, const std::string& backend, const std::string& dir) {
  const auto failed = [&](const char* op, int err) {
    return Status::IoError("backend '" + backend + "': " + op + "('" + dir + "') of the directory failed", err);
  };
  const int fd = ops.Open(dir, O_RDONLY | O_DIRECTORY, 0);
  if (fd < 0) return failed("open", errno);
  Status status;
  if (ops.Fsync(fd) != 0) status = failed("fsync", errno);
  if (ops.Close(fd) != 0 && status.ok()) status = failed("close", errno);
  return status;
}

DirectorySyncer::DirectorySyncer(Runtime& runtime, FileOps& ops, BackendSet& backends)
    : runtime_(runtime), ops_(ops), backends_(backends), mu_(runtime), cv_(runtime) {
  thread_ = runtime_.Spawn("ucm_dir_sync", [this] { Loop(); });
}

DirectorySyncer::~DirectorySyncer() { Stop(); }

void DirectorySyncer::Sync(int backend, std::string dir, std::function<void(Status)> done) {
  {
    MutexLock lock(mu_);
    if (!stopped_) {
      queue_.push_back(Request{backend, std::move(dir), std::move(done)});
      cv_.NotifyOne();
      return;
    }
  }
  done(Status::Unavailable("backend '" + backends_.path(backend) + "': the store is stopping; '" + dir +
                           "' was not made durable"));
}

void DirectorySyncer::Stop() {
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    cv_.NotifyAll();
  }
  thread_.Join();
}

uint64_t DirectorySyncer::rounds() {
  MutexLock lock(mu_);
  return rounds_;
}

uint64_t DirectorySyncer::directory_syncs() {
  MutexLock lock(mu_);
  return directory_syncs_;
}

size_t DirectorySyncer::pending() {
  MutexLock lock(mu_);
  return queue_.size() + in_round_;
}

void DirectorySyncer::Loop() {
  for (;;) {
    std::vector<Request> round;
    {
      MutexLock lock(mu_);
      while (queue_.empty() && !stopping_) cv_.Wait(mu_);
      if (queue_.empty()) {
        stopped_ = true;  // stopping and drained: later requests are answered by Sync itself
        return;
      }
      round.swap(queue_);
      in_round_ = round.size();
    }
    RunRound(round);
    MutexLock lock(mu_);
    in_round_ = 0;
  }
}

void DirectorySyncer::RunRound(std::vector<Request>& round) {
  // Ordered maps: the fsyncs of a round run in (backend, path) order, never in arrival order.
  std::map<std::pair<int, std::string>, Status> dirs;
  std::map<int, Status> roots;  // backend directories to sync for newly seen shard directories
  for (const Request& r : round) {
    dirs.emplace(std::make_pair(r.backend, r.dir), Status::Ok());
    if (durable_dirs_.count(r.dir) == 0) roots.emplace(r.backend, Status::Ok());
  }
  uint64_t syncs = 0;
  for (auto& [backend, status] : roots) {
    status = SyncDirectory(ops_, backends_.path(backend), backends_.path(backend));
    backends_.Record(backend, status.ok(), SampleSource::kBusiness);
    ++syncs;
  }
  for (auto& [key, status] : dirs) {
    const auto& [backend, dir] = key;
    status = SyncDirectory(ops_, backends_.path(backend), dir);
    backends_.Record(backend, status.ok(), SampleSource::kBusiness);
    ++syncs;
    if (durable_dirs_.count(dir) == 0) {
      const Status& root = roots.at(backend);
      if (status.ok() && !root.ok()) status = root;
      if (status.ok()) durable_dirs_.insert(dir);
    }
    if (!status.ok()) spdlog::warn("durable commit: {}", status.ToString());
  }
  {
    MutexLock lock(mu_);
    ++rounds_;
    directory_syncs_ += syncs;
  }
  for (Request& r : round) r.done(dirs.at({r.backend, r.dir}));
}

}  // namespace kvchaos::store
