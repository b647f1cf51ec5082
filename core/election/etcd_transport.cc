// One request to one etcd member over HTTP/1.1 (see the header).
#include "core/election/etcd_transport.h"

#include <httplib.h>

#include "core/common/json_text.h"

namespace kvchaos::election {

namespace {

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

bool IsEtcdError(const std::string& body) {
  const nlohmann::json first = EtcdFirstObject(body);
  int code = 0;
  std::string message;
  return first.is_object() && EtcdErrorOf(first, &code, &message);
}

}  // namespace

nlohmann::json EtcdFirstObject(const std::string& body) {
  const size_t newline = body.find('\n');
  const std::string_view first = std::string_view(body).substr(0, newline);
  return nlohmann::json::parse(first, nullptr, /*allow_exceptions=*/false);
}

bool EtcdErrorOf(const nlohmann::json& answer, int* code, std::string* message) {
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

HttpEtcdTransport::HttpEtcdTransport(Runtime& runtime, std::vector<EtcdMember> members)
    : members_(std::move(members)), mu_(runtime) {
  MutexLock lock(mu_);
  idle_.resize(members_.size());
}

HttpEtcdTransport::~HttpEtcdTransport() = default;

std::unique_ptr<httplib::Client> HttpEtcdTransport::TakeClient(size_t index) {
  {
    MutexLock lock(mu_);
    if (!idle_[index].empty()) {
      std::unique_ptr<httplib::Client> client = std::move(idle_[index].back());
      idle_[index].pop_back();
      return client;
    }
  }
  const EtcdMember& m = members_[index];
  auto client = std::make_unique<httplib::Client>(m.host, m.port);
  client->set_keep_alive(true);
  // Headers and body go out in two writes: without this, Nagle's algorithm holds the body until
  // the server's delayed ACK of the headers (40 ms a request on Linux).
  client->set_tcp_nodelay(true);
  return client;
}

void HttpEtcdTransport::ReturnClient(size_t index, std::unique_ptr<httplib::Client> client) {
  if (client == nullptr) return;
  MutexLock lock(mu_);
  if (idle_[index].size() < kMaxIdlePerMember) idle_[index].push_back(std::move(client));
}

void HttpEtcdTransport::DropIdleClients(size_t index) {
  std::vector<std::unique_ptr<httplib::Client>> dropped;
  MutexLock lock(mu_);
  dropped.swap(idle_[index]);
}

EtcdExchange HttpEtcdTransport::Post(size_t index, std::string_view path, const std::string& body, Duration timeout) {
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
  EtcdExchange out;
  req.response_handler = [&out](const httplib::Response& r) {
    out.http_status = r.status;
    return true;
  };
  req.content_receiver = [&out](const char* data, size_t len, uint64_t, uint64_t) {
    out.body.append(data, len);
    return out.body.size() <= kMaxAnswerBytes;
  };
  httplib::Result res = client->send(req);
  if (!res) {
    // etcd's error answers end with HTTP trailers, which cpp-httplib 0.11 cannot read: it reports
    // a read error after the whole body has arrived. Such a body is still etcd's answer.
    if (out.http_status == 0 || !IsEtcdError(out.body)) {
      DropIdleClients(index);  // the member may be gone: its other connections are likely dead too
      const bool timed_out = res.error() == httplib::Error::Read || res.error() == httplib::Error::ConnectionTimeout;
      const std::string msg = DescribeHttpError(res.error(), timeout);
      return EtcdExchange{false, 0, {}, timed_out ? Status::Timeout(msg) : Status::Unavailable(msg)};
    }
    client.reset();  // its connection stopped mid-answer: not reused
  }
  out.answered = true;
  if (out.http_status >= 500 && !IsEtcdError(out.body)) {
    DropIdleClients(index);  // a broken member or proxy: its connections are not kept
    return out;
  }
  ReturnClient(index, std::move(client));
  return out;
}

}  // namespace kvchaos::election
