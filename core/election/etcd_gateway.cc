// Requests to etcd's JSON gateway with failover between members (see the header).
#include "core/election/etcd_gateway.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "core/common/json_text.h"

namespace kvchaos::election {

namespace {

// gRPC codes etcd answers with while it cannot serve the request on this member now: CANCELLED,
// UNKNOWN (the gateway's own "context deadline exceeded"), DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED
// ("too many requests"), UNAVAILABLE ("no leader", "leader changed", "request timed out").
bool WorthAnotherMember(int grpc_code) {
  return grpc_code == 1 || grpc_code == 2 || grpc_code == 4 || grpc_code == 8 || grpc_code == 14;
}

}  // namespace

EtcdGateway::EtcdGateway(Runtime& runtime, EtcdEndpoints endpoints, std::unique_ptr<EtcdTransport> transport)
    : runtime_(runtime),
      endpoints_(std::move(endpoints)),
      mu_(runtime),
      transport_(transport != nullptr ? std::move(transport)
                                      : std::make_unique<HttpEtcdTransport>(runtime, endpoints_.members)) {}

EtcdGateway::~EtcdGateway() = default;

std::string EtcdGateway::MemberName(size_t index) const {
  const EtcdMember& m = endpoints_.members[index];
  const bool v6 = m.host.find(':') != std::string::npos;
  return (v6 ? "[" + m.host + "]" : m.host) + ":" + std::to_string(m.port);
}

std::string EtcdGateway::Describe() const {
  std::string s = "etcd://";
  for (size_t i = 0; i < endpoints_.members.size(); ++i) s += (i > 0 ? "," : "") + MemberName(i);
  return s;
}

std::string EtcdGateway::PreferredMember() {
  MutexLock lock(mu_);
  return MemberName(preferred_);
}

EtcdGateway::Attempt EtcdGateway::Send(size_t index, std::string_view path, const std::string& body,
                                       Duration timeout) {
  const std::string where = "etcd " + MemberName(index) + ": " + std::string(path);
  const EtcdExchange exchange = transport_->Post(index, path, body, timeout);
  if (!exchange.answered) {
    const std::string msg = where + ": " + exchange.failure.message();
    return {Outcome::kFailover,
            exchange.failure.code() == StatusCode::kTimeout ? Status::Timeout(msg) : Status::Unavailable(msg)};
  }
  const int status = exchange.http_status;
  const nlohmann::json answer = EtcdFirstObject(exchange.body);
  int code = 0;
  std::string message;
  if (answer.is_object() && EtcdErrorOf(answer, &code, &message)) {
    const std::string msg = where + ": " + message + " (gRPC code " + std::to_string(code) + ")";
    if (WorthAnotherMember(code)) return {Outcome::kFailover, Status::Unavailable(msg), /*answered=*/true};
    if (code == 5) return {Outcome::kRefused, Status::NotFound(msg)};
    if (code == 3) return {Outcome::kRefused, Status::InvalidArgument(msg)};
    return {Outcome::kRefused, Status::Unavailable(msg)};
  }
  if (status >= 500) {
    return {Outcome::kFailover, Status::Unavailable(where + ": HTTP " + std::to_string(status)), /*answered=*/true};
  }
  if (status != 200 || !answer.is_object()) {
    return {Outcome::kRefused, Status::Unavailable(where + ": HTTP " + std::to_string(status) +
                                                   " without an etcd answer (is this an etcd client port?)")};
  }
  if (answer.contains("result")) {  // a streaming call's first message
    if (!answer["result"].is_object()) {
      return {Outcome::kRefused, Status::Unavailable(where + ": a stream message without an object")};
    }
    return {Outcome::kAnswer, answer["result"]};
  }
  return {Outcome::kAnswer, answer};
}

Result<nlohmann::json> EtcdGateway::Call(std::string_view path, const nlohmann::json& body, MonoTime deadline) {
  const size_t members = endpoints_.members.size();
  if (members == 0) return Status::InvalidConfig("etcd: no members to send " + std::string(path) + " to");
  const std::string text = DumpJson(body);
  size_t start = 0;
  {
    MutexLock lock(mu_);
    start = preferred_;
  }
  std::optional<MonoTime> first_no_leader;  // when a member first answered that it cannot serve
  Status last;
  int made = 0;
  int counted = 0;  // attempts that use up retry_count
  for (size_t tries = 0;; ++tries) {
    // A member this request tried already gets another go only after a backoff, and only when
    // the backoff leaves time for an answer before the deadline.
    if (tries > 0 && tries % members == 0) {
      const size_t round = tries / members;
      const Duration backoff = Millis(std::min<int64_t>(int64_t{20} << std::min<size_t>(round - 1, 5), 500));
      if (deadline - runtime_.Now() <= backoff) break;
      runtime_.SleepFor(backoff);
    }
    const Duration timeout = std::min<Duration>(Millis(endpoints_.timeout_ms), deadline - runtime_.Now());
    if (timeout <= Duration::zero()) break;
    const size_t index = (start + tries) % members;
    ++made;
    Attempt attempt = Send(index, path, text, timeout);
    if (attempt.outcome != Outcome::kFailover) {
      MutexLock lock(mu_);
      if (preferred_ != index) {
        spdlog::info("coordination: etcd member {} answers; requests go there first now", MemberName(index));
        preferred_ = index;
      }
      return std::move(attempt.answer);
    }
    last = attempt.answer.status();
    if (members > 1) spdlog::debug("coordination: {}; trying the next member", last.message());
    // While an election is under way (the old leader gone) every member answers "no leader" at
    // once; for timeout_ms after the first such answer they are asked again without using up
    // retry_count, so a request rides out an election.
    if (attempt.answered && !first_no_leader) first_no_leader = runtime_.Now();
    if (!attempt.answered || runtime_.Now() - *first_no_leader >= Millis(endpoints_.timeout_ms)) ++counted;
    if (counted > endpoints_.retry_count) {
      return last.WithContext(std::string(path) + " failed after " + std::to_string(made) + " attempt(s)");
    }
  }
  const std::string what = std::string(path);
  if (made == 0) return Status::Timeout(what + ": the deadline passed before the first attempt");
  // Cut short by the caller's deadline, not out of retries.
  return Status::Timeout(what + " gave up at the caller's deadline after " + std::to_string(made) +
                         " attempt(s): " + last.message());
}

}  // namespace kvchaos::election
