// SimCoordinationClient: the production CoordinationBackend calls as SimRedis requests (see the header).
#include "sim/sim_coordination_client.h"

#include <algorithm>
#include <map>
#include <optional>

namespace kvchaos::sim {

SimCoordinationClient::SimCoordinationClient(SimRuntime& runtime, SimNetwork& network, SimRedis& redis, int node,
                                             SimClientOptions options)
    : runtime_(runtime), redis_(&redis), node_(node), options_(options), rpc_(runtime, network, node) {}

SimCoordinationClient::SimCoordinationClient(SimRuntime& runtime, SimNetwork& network, SimSentinel& sentinel, int node,
                                             SimClientOptions options)
    : runtime_(runtime), sentinel_(&sentinel), node_(node), options_(options), rpc_(runtime, network, node) {}

BackendReply SimCoordinationClient::Attempt(const BackendRequest& request, Duration timeout) {
  SimRedis* redis = &Server();
  SimSentinel* sentinel = sentinel_;
  SimRuntime* runtime = &runtime_;
  const TraceTag* tag = &OpTag(request.op);
  auto serve = [=](SimRpc<BackendReply>::Respond respond) {
    BackendReply reply;
    if (!redis->up()) {
      reply.status = Status::Unavailable("redis: connection refused");
    } else if (sentinel != nullptr && !sentinel->IsPrimary(*redis)) {
      reply.status = Status::Unavailable("redis: READONLY You can't write against a read only replica.");
    } else {
      reply = redis->Apply(request);
    }
    static constexpr TraceTag kApplyTag("redis-apply");
    runtime->trace().Event(runtime->true_now(), -1, 0, kApplyTag, static_cast<int64_t>(reply.status.code()),
                           static_cast<int64_t>(reply.token), tag);
    respond(std::move(reply));
  };
  BackendReply reply;
  switch (rpc_.Call(redis->host(), *tag, serve, runtime_.Now() + timeout, &reply)) {
    case SimRpc<BackendReply>::Outcome::kReplied:
      return reply;
    case SimRpc<BackendReply>::Outcome::kCutOff:
      return BackendReply{Status::Unavailable("node process is gone"), 0, {}, 0, {}};
    case SimRpc<BackendReply>::Outcome::kTimedOut:
      break;
  }
  return BackendReply{Status::Timeout(std::string("redis: ") + OpName(request.op) + " timed out after " +
                                      std::to_string(ToMillis(timeout)) + " ms"),
                      0, {}, 0, {}};
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
    if (rpc_.cut_off()) break;
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

std::string SimCoordinationClient::Describe() const {
  return std::string(sentinel_ != nullptr ? "sim-redis-sentinel" : "sim-redis") + " (node " + std::to_string(node_) + ")";
}

}  // namespace kvchaos::sim
