// Replies find their caller through a shared block that outlives the client, so a reply that
// arrives after the client is gone (end of run) is simply dropped.
#include "sim/sim_coordination_client.h"

#include <algorithm>
#include <map>
#include <optional>

namespace kvchaos::sim {

struct SimCoordinationClient::Shared {
  explicit Shared(SimRuntime& runtime) : mu(runtime), cv(runtime) {}
  Mutex mu;
  CondVar cv;
  bool alive = true;
  bool cut_off = false;
  uint64_t next_call = 0;
  // Calls waiting for their reply; a reply for a call not here (timed out, duplicate) is dropped.
  std::map<uint64_t, std::optional<BackendReply>> pending;
};

SimCoordinationClient::SimCoordinationClient(SimRuntime& runtime, SimNetwork& network, SimRedis& redis, int node,
                                             SimClientOptions options)
    : runtime_(runtime),
      network_(network),
      redis_(redis),
      node_(node),
      options_(options),
      shared_(std::make_shared<Shared>(runtime)) {}

SimCoordinationClient::~SimCoordinationClient() { shared_->alive = false; }

void SimCoordinationClient::CutOff() {
  MutexLock lock(shared_->mu);
  shared_->cut_off = true;
  shared_->cv.NotifyAll();
}

BackendReply SimCoordinationClient::Attempt(const BackendRequest& request, Duration timeout) {
  std::shared_ptr<Shared> shared = shared_;
  uint64_t call = 0;
  {
    MutexLock lock(shared->mu);
    if (shared->cut_off) return BackendReply{Status::Unavailable("node process is gone"), 0, {}, 0, {}};
    call = ++shared->next_call;
    shared->pending.emplace(call, std::nullopt);
  }
  const char* what = OpName(request.op);
  const TraceTag* tag = &OpTag(request.op);
  SimNetwork* network = &network_;
  SimRedis* redis = &redis_;
  SimRuntime* runtime = &runtime_;
  const int node = node_;
  network_.Send(node_, Direction::kToBackend, *tag, [=] {
    BackendReply reply = redis->up() ? redis->Apply(request)
                                     : BackendReply{Status::Unavailable("redis: connection refused"), 0, {}, 0, {}};
    static constexpr TraceTag kApplyTag("redis-apply");
    runtime->trace().Event(runtime->true_now(), -1, 0, kApplyTag, static_cast<int64_t>(reply.status.code()),
                           static_cast<int64_t>(reply.token), tag);
    network->Send(node, Direction::kFromBackend, *tag, [shared, call, reply = std::move(reply)] {
      if (!shared->alive) return;
      MutexLock lock(shared->mu);
      auto it = shared->pending.find(call);
      if (it == shared->pending.end() || it->second.has_value()) return;
      it->second = reply;
      shared->cv.NotifyAll();
    });
  });
  const MonoTime deadline = runtime_.Now() + timeout;
  MutexLock lock(shared->mu);
  while (true) {
    auto it = shared->pending.find(call);
    if (it->second.has_value()) {
      BackendReply reply = std::move(*it->second);
      shared->pending.erase(it);
      return reply;
    }
    if (shared->cut_off) {
      shared->pending.erase(it);
      return BackendReply{Status::Unavailable("node process is gone"), 0, {}, 0, {}};
    }
    if (!shared->cv.WaitUntil(shared->mu, deadline)) {
      // A late reply for this call may still arrive: it is dropped when it does.
      shared->pending.erase(call);
      return BackendReply{Status::Timeout(std::string("redis: ") + what + " timed out after " +
                                          std::to_string(ToMillis(timeout)) + " ms"),
                          0, {}, 0, {}};
    }
  }
}

BackendReply SimCoordinationClient::Call(BackendRequest request, MonoTime deadline) {
  request.node = node_;
  BackendReply reply{Status::Timeout(std::string("redis: ") + OpName(request.op) +
                                     ": the deadline passed before the first attempt"),
                     0, {}, 0, {}};
  // As the production client: each attempt waits at most timeout_ms and never past the caller's
  // deadline, and no attempt starts after it.
  for (int attempt = 0; attempt <= options_.retry_count; ++attempt) {
    const Duration timeout = std::min<Duration>(Millis(options_.timeout_ms), deadline - runtime_.Now());
    if (timeout <= Duration::zero()) break;
    reply = Attempt(request, timeout);
    const StatusCode code = reply.status.code();
    if (code != StatusCode::kTimeout && code != StatusCode::kUnavailable) break;
    if (shared_->cut_off) break;
  }
  // Late replies of abandoned attempts are dropped on arrival: no caller looks for them.
  return reply;
}

Result<election::LockGrant> SimCoordinationClient::TryLock(std::string_view key, std::string_view holder,
                                                           Duration lease, MonoTime deadline) {
  BackendReply r =
      Call({BackendRequest::Op::kTryLock, std::string(key), std::string(holder), lease.count(), 0, -1}, deadline);
  if (!r.status.ok()) return r.status;
  return election::LockGrant{r.token};
}

Status SimCoordinationClient::RenewLock(std::string_view key, std::string_view holder, Duration lease,
                                        MonoTime deadline) {
  return Call({BackendRequest::Op::kRenewLock, std::string(key), std::string(holder), lease.count(), 0, -1}, deadline)
      .status;
}

Status SimCoordinationClient::Unlock(std::string_view key, std::string_view holder, MonoTime deadline) {
  return Call({BackendRequest::Op::kUnlock, std::string(key), std::string(holder), 0, 0, -1}, deadline).status;
}

Result<election::LockHolderInfo> SimCoordinationClient::GetLockHolder(std::string_view key, MonoTime deadline) {
  BackendReply r = Call({BackendRequest::Op::kGetLockHolder, std::string(key), {}, 0, 0, -1}, deadline);
  if (!r.status.ok()) return r.status;
  return election::LockHolderInfo{r.text, Duration(r.ttl_ns), r.token};
}

Result<election::FencingToken> SimCoordinationClient::RaiseTokenFloor(std::string_view key, std::string_view holder,
                                                                      election::FencingToken floor,
                                                                      MonoTime deadline) {
  KVCHAOS_RETURN_IF_ERROR(election::ValidateTokenFloor(floor));
  BackendReply r =
      Call({BackendRequest::Op::kRaiseTokenFloor, std::string(key), std::string(holder), 0, floor, -1}, deadline);
  if (!r.status.ok()) return r.status;
  return r.token;
}

Status SimCoordinationClient::SetValue(std::string_view key, std::string_view value) {
  return Call({BackendRequest::Op::kSetValue, std::string(key), std::string(value), 0, 0, -1}).status;
}

Status SimCoordinationClient::SetValueWithTtl(std::string_view key, std::string_view value, Duration ttl) {
  return Call({BackendRequest::Op::kSetValueWithTtl, std::string(key), std::string(value), ttl.count(), 0, -1}).status;
}

Result<std::string> SimCoordinationClient::GetValue(std::string_view key) {
  BackendReply r = Call({BackendRequest::Op::kGetValue, std::string(key), {}, 0, 0, -1});
  if (!r.status.ok()) return r.status;
  return r.text;
}

Status SimCoordinationClient::DeleteValue(std::string_view key) {
  return Call({BackendRequest::Op::kDeleteValue, std::string(key), {}, 0, 0, -1}).status;
}

Result<std::vector<election::KeyValue>> SimCoordinationClient::ListValues(std::string_view prefix) {
  BackendReply r = Call({BackendRequest::Op::kListValues, std::string(prefix), {}, 0, 0, -1});
  if (!r.status.ok()) return r.status;
  return r.values;
}

Status SimCoordinationClient::FencedWrite(uint64_t token) {
  return Call({BackendRequest::Op::kFencedWrite, "indexer", {}, 0, token, -1}).status;
}

Result<uint64_t> SimCoordinationClient::FenceNewest() {
  BackendReply r = Call({BackendRequest::Op::kFenceNewest, "indexer", {}, 0, 0, -1});
  if (!r.status.ok()) return r.status;
  return r.token;
}

std::string SimCoordinationClient::Describe() const { return "sim-redis (node " + std::to_string(node_) + ")"; }

}  // namespace kvchaos::sim
