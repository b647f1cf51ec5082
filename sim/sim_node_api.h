// The node API over the simulated network. A node is reached at "<host name>:<port>" with the
// world's fixed ports (kSimMetaPort, kSimAdminPort). SimApiServer is one node process's side: calls
// that arrive are queued and answered by its worker threads (kvc_hw_meta_N, like the HTTP server's
// workers) through a handler — the world's wrapper around the production service::NodeApi — so a
// paused or slowed node answers late and a crashed one not at all. SimNodeTransport is a client's
// client::NodeTransport: LeaderDiscovery and HttpMetaClient run unchanged over it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/client/node_transport.h"
#include "core/service/node_api.h"
#include "sim/sim_rpc.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

inline constexpr int kSimMetaPort = 7001;
inline constexpr int kSimAdminPort = 7002;

// An answer with http_status 0: nobody listens (the process is gone): connection refused.
using ApiRpc = SimRpc<service::ApiReply>;

// Calls and answers travel as JSON values (NodeApi::HandleValue), not as text.
struct ApiCall {
  service::ApiPort port = service::ApiPort::kMeta;
  std::string call;
  nlohmann::json body;
  ApiRpc::Respond respond;
};

class SimApiServer {
 public:
  using Handler = std::function<service::ApiReply(service::ApiPort port, const std::string& call, nlohmann::json body)>;

  SimApiServer(SimRuntime& runtime, int host, int workers, Handler handler);
  ~SimApiServer();  // Stop()
  SimApiServer(const SimApiServer&) = delete;
  SimApiServer& operator=(const SimApiServer&) = delete;

  void Start();
  // Runs on the scheduler context when a call arrives: queued for a worker, refused once stopped.
  void Arrive(ApiCall call);
  // Refuses queued and later calls, lets the workers finish the calls they hold, joins them.
  void Stop();
  // The process is gone (crash): later arrivals are refused, its frozen workers are left alone.
  void Kill() { stopping_ = true; }

 private:
  void WorkerLoop();

  SimRuntime& runtime_;
  const int host_;
  const int workers_;
  Handler handler_;
  Mutex mu_;
  CondVar cv_;
  bool stopping_ = false;
  std::deque<ApiCall> queue_;
  std::vector<Thread> threads_;
};

class SimNodeTransport final : public client::NodeTransport {
 public:
  // `host_of(name)`: the host of a node's name (-1 unknown); `deliver(host, call)`: hands a call
  // that reached `host` to whatever listens there (on the scheduler context).
  SimNodeTransport(SimRuntime& runtime, SimNetwork& network, int host, std::function<int(std::string_view)> host_of,
                   std::function<void(int host, ApiCall call)> deliver);

  Result<nlohmann::json> Call(const std::string& endpoint, std::string_view call, const nlohmann::json& body,
                              int64_t timeout_ms) override;
  void CutOff() { rpc_.CutOff(); }

 private:
  SimRuntime& runtime_;
  std::function<int(std::string_view)> host_of_;
  std::function<void(int, ApiCall)> deliver_;
  ApiRpc rpc_;
};

}  // namespace kvchaos::sim
