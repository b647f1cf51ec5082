// The node's HTTP servers over NodeApi (see http_api.h).
#include "core/service/http_api.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "core/service/runtime_task_queue.h"
#include "core/service/wire_format.h"

namespace kvchaos::service {
namespace {

void Routes(httplib::Server& server, const NodeApi& api, ApiPort port) {
  for (const std::string& call : api.Calls(port)) {
    auto serve = [&api, port, call](const httplib::Request& req, httplib::Response& res) {
      ApiAnswer answer = api.Handle(port, call, req.body);
      res.status = answer.http_status;
      res.set_content(std::move(answer.body), "application/json");
    };
    const std::string path = std::string(wire::kApiPrefix) + call;
    server.Post(path, serve);
    server.Get(path, serve);
  }
}

}  // namespace

HttpApi::HttpApi(Runtime& runtime, const NodeApi& api, int workers)
    : runtime_(runtime), meta_(std::make_unique<httplib::Server>()), admin_(std::make_unique<httplib::Server>()) {
  // Connections are served by runtime threads (kvc_hw_meta_N / kvc_hw_adm_N), not httplib's own
  // std::thread pool; a few queued connections per worker before the accept thread waits.
  const size_t queued = static_cast<size_t>(workers) * 4;
  meta_->new_task_queue = RuntimeTaskQueue::Factory(runtime_, "kvc_hw_meta_", workers, queued);
  admin_->new_task_queue = RuntimeTaskQueue::Factory(runtime_, "kvc_hw_adm_", workers, queued);
  Routes(*meta_, api, ApiPort::kMeta);
  Routes(*admin_, api, ApiPort::kAdmin);
}

HttpApi::~HttpApi() { Stop(); }

Result<std::pair<int, int>> HttpApi::Bind(const std::string& host, int meta_port, int admin_port) {
  auto bind = [&host](httplib::Server& server, int port, std::string_view what) -> Result<int> {
    if (port == 0) {
      int bound = server.bind_to_any_port(host);
      if (bound <= 0) return Status::Unavailable("cannot bind " + std::string(what) + " on " + host);
      return bound;
    }
    if (!server.bind_to_port(host, port)) {
      return Status::Unavailable("cannot bind " + std::string(what) + " on " + host + ":" + std::to_string(port) +
                                 " (in use?)");
    }
    return port;
  };
  auto m = bind(*meta_, meta_port, "kvcm.service.meta_http_port");
  if (!m.ok()) return m.status();
  auto a = bind(*admin_, admin_port, "kvcm.service.admin_http_port");
  if (!a.ok()) {
    meta_->stop();
    return a.status();
  }
  return std::make_pair(*m, *a);
}

Status HttpApi::Serve() {
  meta_thread_ = runtime_.Spawn("kvc_http_meta", [this] { meta_->listen_after_bind(); });
  admin_thread_ = runtime_.Spawn("kvc_http_adm", [this] { admin_->listen_after_bind(); });
  // httplib's stop() only works once its loop runs, so Stop() right after Serve() could otherwise
  // leave a loop blocked in accept forever.
  MonoTime deadline = runtime_.Now() + std::chrono::seconds(10);
  while (!(meta_->is_running() && admin_->is_running())) {
    if (runtime_.Now() > deadline) return Status::Unavailable("HTTP servers did not start within 10 s");
    runtime_.SleepFor(std::chrono::milliseconds(1));
  }
  return Status::Ok();
}

void HttpApi::Stop() {
  meta_->stop();
  admin_->stop();
  meta_thread_.Join();
  admin_thread_.Join();
}

}  // namespace kvchaos::service
