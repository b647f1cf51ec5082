// EtcdTransport: how EtcdGateway sends one request to one etcd member and waits for its answer —
// the seam between the gateway's failover, backoff and deadline logic (etcd_gateway.h) and the
// wire. HttpEtcdTransport (the default) POSTs over HTTP/1.1 to the member's client port; the
// simulator carries the same request over its network to its etcd model (sim/sim_etcd_transport.h),
// so the production gateway and backend run unchanged on both.
//
// Every request is sent with the gRPC metadata `hasleader: true`: a member cut off from its quorum
// answers "no leader" at once instead of holding the request. A transport only moves bytes: what
// an answer means (an etcd error, a streaming call's first message) is the gateway's to read.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/common/thread_annotations.h"
#include "core/election/coordination_uri.h"

namespace httplib {
class Client;
}

namespace kvchaos::election {

struct EtcdExchange {
  // True when the member answered (any HTTP status): `http_status` and `body` hold its answer.
  // False when it gave none (refused, timed out, connection broken): `failure` says why, with
  // kTimeout when the wait ran out and kUnavailable otherwise.
  bool answered = false;
  int http_status = 0;
  std::string body;
  Status failure = Status::Ok();
};

class EtcdTransport {
 public:
  virtual ~EtcdTransport() = default;
  // POSTs `body` (JSON) to `path` ("/v3/kv/txn") on member `member` (an index into the
  // endpoints' members) and waits at most `timeout` for the answer.
  virtual EtcdExchange Post(size_t member, std::string_view path, const std::string& body, Duration timeout) = 0;
};

// The first JSON object of an answer's body: a streaming call answers with one object per line.
// Discarded (not an exception) when the body does not parse.
nlohmann::json EtcdFirstObject(const std::string& body);
// gRPC code and message of an etcd error answer: {"error": "...", "message": "...", "code": N} for
// a unary call, {"error": {"grpc_code": N, "message": "..."}} for a streaming one. False when the
// answer is not an error.
bool EtcdErrorOf(const nlohmann::json& answer, int* code, std::string* message);

// HTTP/1.1 keep-alive, one connection per request in flight (no request waits behind another's
// answer); up to kMaxIdlePerMember are kept per member for the next requests, and all of a
// member's are dropped when one of them failed or it answered HTTP 5xx without an etcd error.
class HttpEtcdTransport final : public EtcdTransport {
 public:
  static constexpr size_t kMaxIdlePerMember = 4;
  // An answer longer than this is refused (a listing is read in pages far below it).
  static constexpr size_t kMaxAnswerBytes = size_t{64} << 20;

  HttpEtcdTransport(Runtime& runtime, std::vector<EtcdMember> members);
  ~HttpEtcdTransport() override;
  HttpEtcdTransport(const HttpEtcdTransport&) = delete;
  HttpEtcdTransport& operator=(const HttpEtcdTransport&) = delete;

  EtcdExchange Post(size_t member, std::string_view path, const std::string& body, Duration timeout) override;

 private:
  std::unique_ptr<httplib::Client> TakeClient(size_t index);
  void ReturnClient(size_t index, std::unique_ptr<httplib::Client> client);
  void DropIdleClients(size_t index);

  const std::vector<EtcdMember> members_;
  Mutex mu_;
  std::vector<std::vector<std::unique_ptr<httplib::Client>>> idle_ GUARDED_BY(mu_);
};

}  // namespace kvchaos::election
