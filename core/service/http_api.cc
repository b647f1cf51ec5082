// The node's HTTP ports over NodeApi (see http_api.h).
#include "core/service/http_api.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/service/node_metrics.h"
#include "core/service/wire_format.h"

namespace kvchaos::service {

// cpp-httplib as the parser, router and answer writer of one complete request: process_request
// (protected in httplib::Server) run over the request's bytes in memory. Its own listener is never
// started; HttpServer owns the sockets.
class ApiRouter final : public httplib::Server {
 public:
  using httplib::Server::process_request;
};

namespace {

// One request's bytes in, the answer's bytes out.
class RequestStream final : public httplib::Stream {
 public:
  RequestStream(std::string_view request, const std::string& ip, int port) : in_(request), ip_(ip), port_(port) {}
  bool is_readable() const override { return at_ < in_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, in_.size() - at_);
    std::memcpy(ptr, in_.data() + at_, n);
    at_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = ip_;
    port = port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip.clear();
    port = 0;
  }
  socket_t socket() const override { return INVALID_SOCKET; }
  std::string& out() { return out_; }

 private:
  std::string_view in_;
  size_t at_ = 0;
  std::string out_;
  const std::string& ip_;
  int port_;
};

const char* PortName(ApiPort port) { return port == ApiPort::kMeta ? "meta" : "admin"; }

void Routes(httplib::Server& server, const NodeApi& api, ApiPort port, const HttpLimits& limits, Runtime& runtime,
            MetricsRegistry& requests) {
  for (const std::string& call : api.Calls(port)) {
    auto serve = [&api, &runtime, &requests, port, call](const httplib::Request& req, httplib::Response& res) {
      const MonoTime begun = runtime.Now();
      ApiAnswer answer = api.Handle(port, call, req.body);
      const MetricLabels route{{"port", PortName(port)}, {"route", call}};
      requests.Observe("kvchaos_node_request_duration_seconds", "Time from a route's start to its answer, by port and route.",
                       route, std::chrono::duration<double>(runtime.Now() - begun).count(),
                       LatencyBucketsSeconds());
      requests.Add("kvchaos_node_requests_total", "Requests answered by a route, by port, route and HTTP status.",
                   {{"port", PortName(port)}, {"route", call}, {"status", std::to_string(answer.http_status)}});
      res.status = answer.http_status;
      res.set_content(std::move(answer.body), "application/json");
    };
    const std::string path = std::string(wire::kApiPrefix) + call;
    server.Post(path, serve);
    server.Get(path, serve);
  }
  // HttpServer enforces these; httplib's settings say the same (its Keep-Alive header, and a
  // second guard on the body).
  server.set_payload_max_length(static_cast<size_t>(limits.max_body_bytes));
  server.set_keep_alive_max_count(HttpServer::kMaxRequestsPerConnection);
  server.set_keep_alive_timeout(std::max<time_t>(1, static_cast<time_t>(limits.idle_timeout_ms / 1000)));
}

HttpServer::Handler Answerer(ApiRouter& router) {
  return [&router](std::string_view request, const std::string& ip, int port, bool last) {
    RequestStream stream(request, ip, port);
    bool closed = false;
    router.process_request(stream, last, closed, nullptr);
    std::string& out = stream.out();
    // httplib answers "Expect: 100-continue" itself; HttpServer already did, before the body came.
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    if (out.starts_with(kContinue)) out.erase(0, kContinue.size());
    return std::move(out);
  };
}

}  // namespace

HttpApi::HttpApi(Runtime& runtime, const NodeApi& api, int workers, HttpLimits limits, std::string admin_token)
    : api_(api), meta_router_(std::make_unique<ApiRouter>()), admin_router_(std::make_unique<ApiRouter>()) {
  Routes(*meta_router_, api, ApiPort::kMeta, limits, runtime, requests_);
  Routes(*admin_router_, api, ApiPort::kAdmin, limits, runtime, requests_);
  admin_router_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(RenderMetrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  meta_ = std::make_unique<HttpServer>(
      runtime, HttpServerOptions{"meta", "kvcm.service.meta_http_port", workers, limits, ""}, Answerer(*meta_router_));
  admin_ = std::make_unique<HttpServer>(
      runtime, HttpServerOptions{"adm", "kvcm.service.admin_http_port", workers, limits, std::move(admin_token)},
      Answerer(*admin_router_));
}

HttpApi::~HttpApi() { Stop(); }

std::string HttpApi::RenderMetrics() const {
  MetricsRegistry out;
  requests_.CopyInto(out);
  WriteNodeMetrics(api_.node(), out);
  for (const HttpServer* server : {meta_.get(), admin_.get()}) {
    const HttpServerStats s = server->stats();
    const std::string port = server == meta_.get() ? "meta" : "admin";
    out.Add("kvchaos_node_http_connections_total", "Connections accepted, by port.", {{"port", port}},
            static_cast<double>(s.accepted));
    out.Add("kvchaos_node_http_requests_served_total", "Complete requests answered, by port.", {{"port", port}},
            static_cast<double>(s.served));
    const std::pair<const char*, uint64_t> refused[] = {{"connections", s.refused_connections},
                                                        {"busy", s.refused_busy},
                                                        {"framing", s.refused_framing},
                                                        {"unauthorized", s.refused_unauthorized},
                                                        {"timed_out", s.timed_out}};
    for (const auto& [reason, count] : refused) {
      out.Add("kvchaos_node_http_refused_total", "Requests or connections refused before a route ran, by port and reason.",
              {{"port", port}, {"reason", reason}}, static_cast<double>(count));
    }
  }
  return out.Render();
}

std::string HttpApi::Answer(ApiPort port, std::string_view request) const {
  return Answerer(port == ApiPort::kMeta ? *meta_router_ : *admin_router_)(request, "", 0, /*last=*/false);
}

Result<std::pair<int, int>> HttpApi::Bind(const std::string& host, int meta_port, int admin_port) {
  auto m = meta_->Bind(host, meta_port);
  if (!m.ok()) return m.status();
  auto a = admin_->Bind(host, admin_port);
  if (!a.ok()) return a.status();
  return std::make_pair(*m, *a);
}

Status HttpApi::Serve() {
  KVCHAOS_RETURN_IF_ERROR(meta_->Serve());
  return admin_->Serve();
}

void HttpApi::Stop() {
  meta_->Stop();
  admin_->Stop();
}

}  // namespace kvchaos::service
