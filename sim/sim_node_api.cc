// The node API over the simulated network (see the header).
#include "sim/sim_node_api.h"

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "core/client/leader_discovery.h"

namespace kvchaos::sim {
namespace {

// One trace tag per call name, made once and kept for the process (tags are views of stable
// strings; replies may be traced after their caller is gone). Worlds of parallel runs share it.
const TraceTag& CallTag(std::string_view call) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<std::pair<std::string, TraceTag>>, std::less<>> tags;
  std::lock_guard<std::mutex> lock(mu);  // never held across a wait
  auto it = tags.find(call);
  if (it != tags.end()) return it->second->second;
  auto entry = std::make_unique<std::pair<std::string, TraceTag>>("api." + std::string(call), TraceTag(""));
  entry->second = TraceTag(entry->first);
  return tags.emplace(std::string(call), std::move(entry)).first->second->second;
}

}  // namespace

SimApiServer::SimApiServer(SimRuntime& runtime, int host, int workers, Handler handler)
    : runtime_(runtime), host_(host), workers_(workers), handler_(std::move(handler)), mu_(runtime), cv_(runtime) {}

SimApiServer::~SimApiServer() { Stop(); }

void SimApiServer::Start() {
  for (int i = 0; i < workers_; ++i) {
    threads_.push_back(runtime_.SpawnOn(host_, "kvc_hw_meta_" + std::to_string(i), [this] { WorkerLoop(); }));
  }
}

void SimApiServer::Arrive(ApiCall call) {
  if (stopping_) {
    call.respond(service::ApiReply{0, {}});
    return;
  }
  MutexLock lock(mu_);
  queue_.push_back(std::move(call));
  cv_.NotifyOne();
}

void SimApiServer::WorkerLoop() {
  while (true) {
    ApiCall call;
    {
      MutexLock lock(mu_);
      while (queue_.empty() && !stopping_) cv_.Wait(mu_);
      if (queue_.empty()) return;
      call = std::move(queue_.front());
      queue_.pop_front();
      if (stopping_) {
        call.respond(service::ApiReply{0, {}});
        continue;
      }
    }
    call.respond(handler_(call.port, call.call, std::move(call.body)));
  }
}

void SimApiServer::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    cv_.NotifyAll();
  }
  for (Thread& t : threads_) t.Join();
  threads_.clear();
}

SimNodeTransport::SimNodeTransport(SimRuntime& runtime, SimNetwork& network, int host,
                                   std::function<int(std::string_view)> host_of,
                                   std::function<void(int, ApiCall)> deliver)
    : runtime_(runtime), host_of_(std::move(host_of)), deliver_(std::move(deliver)), rpc_(runtime, network, host) {}

Result<nlohmann::json> SimNodeTransport::Call(const std::string& endpoint, std::string_view call,
                                              const nlohmann::json& body, int64_t timeout_ms) {
  std::string name;
  int port = 0;
  KVCHAOS_RETURN_IF_ERROR(client::ParseHostPort(endpoint, &name, &port));
  const int to = host_of_(name);
  if (to < 0 || (port != kSimMetaPort && port != kSimAdminPort)) {
    return Status::Unavailable("node " + endpoint + " unreachable: no such host or port");
  }
  const service::ApiPort api_port = port == kSimMetaPort ? service::ApiPort::kMeta : service::ApiPort::kAdmin;
  // The body is copied once into the request, which is moved to the node on delivery: a
  // duplicated message runs a copy of this closure (see SimRpc::Call).
  auto serve = [deliver = deliver_, to, request = ApiCall{api_port, std::string(call), body, {}}](
                   ApiRpc::Respond respond) mutable {
    request.respond = std::move(respond);
    deliver(to, std::move(request));
  };
  service::ApiReply answer;
  switch (rpc_.Call(to, CallTag(call), std::move(serve), runtime_.Now() + Millis(timeout_ms), &answer)) {
    case ApiRpc::Outcome::kCutOff:
      return Status::Unavailable("node " + endpoint + " unreachable: the caller's process is gone");
    case ApiRpc::Outcome::kTimedOut:
      return Status::Unavailable("node " + endpoint + " unreachable: no answer within " + std::to_string(timeout_ms) +
                                 " ms");
    case ApiRpc::Outcome::kReplied:
      break;
  }
  if (answer.http_status == 0) return Status::Unavailable("node " + endpoint + " unreachable: connection refused");
  if (!answer.body.is_object()) {
    return Status::Internal("node " + endpoint + " answered HTTP " + std::to_string(answer.http_status) +
                            " without a JSON object");
  }
  return std::move(answer.body);
}

}  // namespace kvchaos::sim
