// HttpApi: the node's two HTTP ports, a thin shell over NodeApi (node_api.h): every call of a port
// is routed at /api/<Call> (POST, and GET for calls without arguments) and answered with what
// NodeApi answers. Each port is an HttpServer (http_server.h: its event loop kvc_http_meta /
// kvc_http_adm reads whole requests under HttpLimits; workers kvc_hw_meta_N / kvc_hw_adm_N, spawned
// through kvchaos::Runtime, run them); cpp-httplib parses each complete request, routes it and
// writes the answer. With an admin token, every admin-port request must carry
// "Authorization: Bearer <token>" (401 otherwise). Stop() joins every thread.
//
// The admin port also serves GET /metrics: the node's metrics in the Prometheus text format
// (node_metrics.h), with the requests of both ports counted by route and HTTP status and timed
// from the route's start to its answer (kvchaos_node_requests_total, kvchaos_node_request_duration_seconds).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "core/common/metrics.h"
#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/service/http_limits.h"
#include "core/service/http_server.h"
#include "core/service/node_api.h"

namespace kvchaos::service {

class ApiRouter;

class HttpApi {
 public:
  HttpApi(Runtime& runtime, const NodeApi& api, int workers, HttpLimits limits = {}, std::string admin_token = "");
  ~HttpApi();  // calls Stop()
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Binds both ports on `host` (0 = any free port); returns {meta port, admin port}.
  Result<std::pair<int, int>> Bind(const std::string& host, int meta_port, int admin_port);
  // Starts serving (after Bind).
  Status Serve();
  void Stop();

  const HttpServer& meta() const { return *meta_; }
  const HttpServer& admin() const { return *admin_; }

  // What a port's worker answers to one complete request (its exact bytes, as ScanHttpRequest
  // framed them) once HttpServer has let it through (limits, admin token): cpp-httplib's parse,
  // the route, NodeApi, the answer's bytes. The same handler the ports run, without sockets: for
  // the fuzzer (fuzz/node_api_fuzz.cc).
  std::string Answer(ApiPort port, std::string_view request) const;

  // What GET /metrics answers: the request metrics, the node's (node_metrics.h) and both ports'.
  std::string RenderMetrics() const;

 private:
  const NodeApi& api_;
  MetricsRegistry requests_;  // before the routers, whose routes count into it
  std::unique_ptr<ApiRouter> meta_router_;
  std::unique_ptr<ApiRouter> admin_router_;
  std::unique_ptr<HttpServer> meta_;
  std::unique_ptr<HttpServer> admin_;
};

}  // namespace kvchaos::service
