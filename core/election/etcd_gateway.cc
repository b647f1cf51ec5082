// Requests to etcd's JSON gateway with failover between members (see the header).
#include "core/election/etcd_gateway.h"

#include <httplib.h>
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

// httplib names its errors in one word; say what happened.
std::string DescribeHttpError(httplib::Error error, Duration timeout) {
  const std::string ms = std::to_string(ToMillis(timeout));
  switch (error) {
    case httplib::Error::Connection:
      return "cannot connect (refused: nothing listens on that port, or the host is unreachable)";
    case httplib::Error::ConnectionTimeout:
      return "no connection within " + ms + " ms";
    case httplib::Error::Read:
      return "no answer within " + ms + " ms, or the connection broke while reading it";
    case httplib::Error::Write:
      return "the connection broke while sending the request";
    default:
      return httplib::to_string(error);
  }
}

// The first JSON object of a body: a streaming call answers with one object per line.
nlohmann::json FirstObject(const std::string& body) {
  const size_t newline = body.find('\n');
  const std::string_view first = std::string_view(body).substr(0, newline);
  return nlohmann::json::parse(first, nullptr, /*allow_exceptions=*/false);
}

// gRPC code and message of an error answer: {"error": "...", "message": "...", "code": N} for a
// unary call, {"error": {"grpc_code": N, "message": "..."}} for a streaming one. False when the
// answer is not an error.
bool ErrorOf(const nlohmann::json& answer, int* code, std::string* message) {
  if (!answer.is_object() || !answer.contains("error")) return false;
  const nlohmann::json& error = answer["error"];
  const nlohmann::json* where = error.is_object() ? &error : &answer;
  const char* code_key = error.is_object() ? "grpc_code" : "code";
  *code = where->contains(code_key) && (*where)[code_key].is_number_integer() ? (*where)[code_key].get<int>() : 2;
  if (where->contains("message") && (*where)["message"].is_string()) {
    *message = (*where)["message"].get<std::string>();
  } else {
    *message = DumpJson(error);
  }
  return true;
}

}  // namespace

EtcdGateway::EtcdGateway(Runtime& runtime, EtcdEndpoints endpoints)
    : runtime_(runtime), endpoints_(std::move(endpoints)), mu_(runtime) {
  MutexLock lock(mu_);
  idle_.resize(endpoints_.members.size());
}

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

std::unique_ptr<httplib::Client> EtcdGateway::TakeClient(size_t index) {
  {
    MutexLock lock(mu_);
    if (!idle_[index].empty()) {
      std::unique_ptr<httplib::Client> client = std::move(idle_[index].back());
      idle_[index].pop_back();
      return client;
    }
  }
  const EtcdMember& m = endpoints_.members[index];
  auto client = std::make_unique<httplib::Client>(m.host, m.port);
  client->set_keep_alive(true);
  // Headers and body go out in two writes: without this, Nagle's algorithm holds the body until
  // the server's delayed ACK of the headers (40 ms a request on Linux).
  client->set_tcp_nodelay(true);
  return client;
}

void EtcdGateway::ReturnClient(size_t index, std::unique_ptr<httplib::Client> client) {
  if (client == nullptr) return;
  MutexLock lock(mu_);
  if (idle_[index].size() < kMaxIdlePerMember) idle_[index].push_back(std::move(client));
}

void EtcdGateway::DropIdleClients(size_t index) {
  std::vector<std::unique_ptr<httplib::Client>> dropped;
  MutexLock lock(mu_);
  dropped.swap(idle_[index]);
}

EtcdGateway::Attempt EtcdGateway::Send(size_t index, std::string_view path, const std::string& body,
                                       Duration timeout) {
  const std::string where = "etcd " + MemberName(index) + ": " + std::string(path);
  std::unique_ptr<httplib::Client> client = TakeClient(index);
  client->set_connection_timeout(timeout);
  client->set_read_timeout(timeout);
  client->set_write_timeout(timeout);
  httplib::Request req;
  req.method = "POST";
  req.path = std::string(path);
  req.body = body;
  // A member without a leader answers at once ("no leader") instead of holding the request.
  req.headers = {{"Content-Type", "application/json"}, {"Grpc-Metadata-Hasleader", "true"}};
  int status = 0;
  std::string received;
  req.response_handler = [&status](const httplib::Response& r) {
    status = r.status;
    return true;
  };
  req.content_receiver = [&received](const char* data, size_t len, uint64_t, uint64_t) {
    received.append(data, len);
    return received.size() <= kMaxAnswerBytes;
  };
  httplib::Result res = client->send(req);
  if (!res) {
    // etcd's error answers end with HTTP trailers, which cpp-httplib 0.11 cannot read: it reports
    // a read error after the whole body has arrived. Such a body is still etcd's answer.
    const nlohmann::json partial = status != 0 ? FirstObject(received) : nlohmann::json();
    int code = 0;
    std::string message;
    if (!partial.is_object() || !ErrorOf(partial, &code, &message)) {
      DropIdleClients(index);  // the member may be gone: its other connections are likely dead too
      const bool timed_out = res.error() == httplib::Error::Read || res.error() == httplib::Error::ConnectionTimeout;
      const std::string msg = where + ": " + DescribeHttpError(res.error(), timeout);
      return {Outcome::kFailover, timed_out ? Status::Timeout(msg) : Status::Unavailable(msg)};
    }
    client.reset();  // its connection stopped mid-answer: not reused
  }
  const nlohmann::json answer = FirstObject(received);
  int code = 0;
  std::string message;
  if (answer.is_object() && ErrorOf(answer, &code, &message)) {
    const std::string msg = where + ": " + message + " (gRPC code " + std::to_string(code) + ")";
    ReturnClient(index, std::move(client));
    if (WorthAnotherMember(code)) return {Outcome::kFailover, Status::Unavailable(msg), /*answered=*/true};
    if (code == 5) return {Outcome::kRefused, Status::NotFound(msg)};
    if (code == 3) return {Outcome::kRefused, Status::InvalidArgument(msg)};
    return {Outcome::kRefused, Status::Unavailable(msg)};
  }
  if (status >= 500) {
    DropIdleClients(index);
    return {Outcome::kFailover, Status::Unavailable(where + ": HTTP " + std::to_string(status)), /*answered=*/true};
  }
  if (status != 200 || !answer.is_object()) {
    ReturnClient(index, std::move(client));
    return {Outcome::kRefused, Status::Unavailable(where + ": HTTP " + std::to_string(status) +
                                                   " without an etcd answer (is this an etcd client port?)")};
  }
  ReturnClient(index, std::move(client));
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
