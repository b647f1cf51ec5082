// HttpApi: the node's two cpp-httplib servers.
//   admin port: GetClusterInfo, GetManagerClusterInfo, CheckHealth, LeaderDemote, ListNodes
//   meta port:  GetClusterInfo (for client discovery), StartWriteCache, FinishWriteCache,
//               GetCacheLocation, RemoveCache, AddStorage, GetStorageConfig
// Bodies are read strictly (JsonRequest): bad JSON, unknown fields or wrong types answer 400 with
// a message naming the field, before the node is asked to change anything. Answers follow
// wire_format.h; followers answer data-plane calls 421 NotLeader with the leader's endpoint.
// The accept loops run on threads spawned through kvchaos::Runtime (kvc_http_meta/kvc_http_adm),
// and so do the workers that serve connections (RuntimeTaskQueue: kvc_hw_meta_N/kvc_hw_adm_N,
// kvcm.service.http_worker_threads each); Stop() joins them all.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace httplib {
class Server;
}

namespace kvchaos::service {

class MetaNode;

class HttpApi {
 public:
  HttpApi(Runtime& runtime, MetaNode& node);
  ~HttpApi();  // calls Stop()
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Binds both ports on `host` (0 = any free port); returns {meta port, admin port}.
  Result<std::pair<int, int>> Bind(const std::string& host, int meta_port, int admin_port);
  // Starts the accept loops (after Bind).
  Status Serve();
  void Stop();

 private:
  void Routes();
  Runtime& runtime_;
  MetaNode& node_;
  std::unique_ptr<httplib::Server> meta_;
  std::unique_ptr<httplib::Server> admin_;
  Thread meta_thread_;
  Thread admin_thread_;
};

}  // namespace kvchaos::service
