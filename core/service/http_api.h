// HttpApi: the node's two cpp-httplib servers, a thin shell over NodeApi (node_api.h): every call
// of a port is routed at /api/<Call> (POST, and GET for calls without arguments) and answered with
// what NodeApi answers. The accept loops run on threads spawned through kvchaos::Runtime
// (kvc_http_meta/kvc_http_adm), and so do the workers that serve connections (RuntimeTaskQueue:
// kvc_hw_meta_N/kvc_hw_adm_N, `workers` each); Stop() joins them all.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/service/node_api.h"

namespace httplib {
class Server;
}

namespace kvchaos::service {

class HttpApi {
 public:
  HttpApi(Runtime& runtime, const NodeApi& api, int workers);
  ~HttpApi();  // calls Stop()
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Binds both ports on `host` (0 = any free port); returns {meta port, admin port}.
  Result<std::pair<int, int>> Bind(const std::string& host, int meta_port, int admin_port);
  // Starts the accept loops (after Bind).
  Status Serve();
  void Stop();

 private:
  Runtime& runtime_;
  std::unique_ptr<httplib::Server> meta_;
  std::unique_ptr<httplib::Server> admin_;
  Thread meta_thread_;
  Thread admin_thread_;
};

}  // namespace kvchaos::service
