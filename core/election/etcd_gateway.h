// EtcdGateway: requests to etcd's v3 JSON gateway (grpc-gateway on each member's client port:
// POST /v3/..., a JSON body, int64 fields as decimal strings, bytes fields as base64) on the
// members of one cluster, for CoordinationEtcdBackend. It knows nothing about locks.
//
// Failover: a request goes first to the member that answered last. When that member gives no
// answer (refused, timed out, connection broken) or answers that it cannot serve now (no leader,
// a request timed out inside etcd, HTTP 5xx), the same request goes to the next member in the
// URI's order, up to retry_count more times. Every request carries the gRPC metadata
// `hasleader: true`, so a member cut off from the quorum says "no leader" at once instead of
// holding the request until etcd's own timeout. While the cluster elects a new leader every
// member says so; for timeout_ms after the first such answer they do not use up retry_count,
// so a request rides out an election (about one election timeout). A member already
// tried by this request is tried again only after a backoff through the Runtime (20 ms, doubling
// per round, at most 500 ms).
// A request with no answer may still have been applied: the backend's transactions compare
// revisions, so sending one again is harmless.
//
// Deadline: each attempt waits at most min(timeout_ms, time left to the caller's deadline) (the
// HTTP client's connect, write and read timeouts), and no attempt or backoff starts that could not
// end before the deadline; the call then fails with kTimeout.
//
// Transport: one request to one member goes through an EtcdTransport (etcd_transport.h): HTTP by
// default, the simulator's network in the simulator; everything above stays the same on both.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/common/thread_annotations.h"
#include "core/election/coordination_uri.h"
#include "core/election/etcd_transport.h"

namespace kvchaos::election {

class EtcdGateway {
 public:
  // `transport` carries each request to a member (null: HTTP to the endpoints' members).
  EtcdGateway(Runtime& runtime, EtcdEndpoints endpoints, std::unique_ptr<EtcdTransport> transport = nullptr);
  ~EtcdGateway();
  EtcdGateway(const EtcdGateway&) = delete;
  EtcdGateway& operator=(const EtcdGateway&) = delete;

  // POSTs `body` to `path` ("/v3/kv/txn") and returns the answer's JSON object (for a streaming
  // call such as /v3/lease/keepalive, its first "result"). An answer that refuses the request for
  // good (an etcd error other than the ones failed over) is a Status naming the member, the path
  // and etcd's message: kNotFound for gRPC NOT_FOUND, kInvalidArgument for INVALID_ARGUMENT,
  // kUnavailable otherwise. No answer from any member: kUnavailable, or kTimeout at the deadline.
  Result<nlohmann::json> Call(std::string_view path, const nlohmann::json& body, MonoTime deadline);

  // "etcd://h1:2379,h2:2379" (the members in the URI's order).
  std::string Describe() const;
  // "host:port" of the member the next request goes to first; for tests and logs.
  std::string PreferredMember();

 private:
  enum class Outcome { kAnswer, kRefused, kFailover };
  struct Attempt {
    Outcome outcome = Outcome::kFailover;
    Result<nlohmann::json> answer = Status::Unavailable("not sent");
    bool answered = false;  // a failover after an answer ("no leader"), not after silence
  };

  // One request to member `index`, waiting at most `timeout`, and what its answer means.
  Attempt Send(size_t index, std::string_view path, const std::string& body, Duration timeout);
  std::string MemberName(size_t index) const;

  Runtime& runtime_;
  const EtcdEndpoints endpoints_;
  Mutex mu_;
  size_t preferred_ GUARDED_BY(mu_) = 0;
  const std::unique_ptr<EtcdTransport> transport_;
};

}  // namespace kvchaos::election
