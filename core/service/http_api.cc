// Routes of the node's HTTP/JSON API (see http_api.h) and their strict request parsing.
#include "core/service/http_api.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <functional>

#include "core/common/json_text.h"
#include "core/common/thread_util.h"
#include "core/service/json_request.h"
#include "core/service/meta_node.h"
#include "core/service/runtime_task_queue.h"
#include "core/service/wire_format.h"

namespace kvchaos::service {
namespace {

using Handler = std::function<Result<nlohmann::json>(JsonRequest&)>;

void Answer(httplib::Response& res, const Status& status, nlohmann::json body, MetaNode& node) {
  body["code"] = StatusCodeName(status.code());
  if (!status.ok()) {
    body["message"] = status.message();
    if (status.code() == StatusCode::kNotLeader) body["leader_endpoint"] = node.LeaderEndpointJson();
  }
  res.status = wire::HttpStatusFor(status.code());
  res.set_content(DumpJson(body), "application/json");
}

void RouteRaw(httplib::Server& server, std::string_view name, const httplib::Server::Handler& fn) {
  std::string path = std::string(wire::kApiPrefix) + std::string(name);
  server.Post(path, fn);
  server.Get(path, fn);
}

void Route(httplib::Server& server, MetaNode& node, std::string_view name, Handler handler) {
  RouteRaw(server, name, [&node, handler](const httplib::Request& req, httplib::Response& res) {
    auto parsed = JsonRequest::Parse(req.body);
    if (!parsed.ok()) return Answer(res, parsed.status(), nlohmann::json::object(), node);
    auto result = handler(*parsed);
    if (!result.ok()) return Answer(res, result.status(), nlohmann::json::object(), node);
    Answer(res, Status::Ok(), std::move(*result), node);
  });
}

// Runs the handler's reads, then stops with 400 unless every field was fine.
#define KVCHAOS_FINISH_REQUEST(req)            \
  do {                                          \
    if (Status s_ = (req).Finish(); !s_.ok()) return s_; \
  } while (0)

Result<nlohmann::json> Empty(const Status& s) {
  if (!s.ok()) return s;
  return nlohmann::json::object();
}

}  // namespace

HttpApi::HttpApi(Runtime& runtime, MetaNode& node)
    : runtime_(runtime), node_(node), meta_(std::make_unique<httplib::Server>()),
      admin_(std::make_unique<httplib::Server>()) {
  // Connections are served by runtime threads (kvc_hw_meta_N / kvc_hw_adm_N), not httplib's own
  // std::thread pool; a few queued connections per worker before the accept thread waits.
  const int workers = node_.config().http_worker_threads;
  const size_t queued = static_cast<size_t>(workers) * 4;
  meta_->new_task_queue = RuntimeTaskQueue::Factory(runtime_, "kvc_hw_meta_", workers, queued);
  admin_->new_task_queue = RuntimeTaskQueue::Factory(runtime_, "kvc_hw_adm_", workers, queued);
  Routes();
}

HttpApi::~HttpApi() { Stop(); }

void HttpApi::Routes() {
  MetaNode& n = node_;
  auto cluster_info = [&n](JsonRequest& req) -> Result<nlohmann::json> {
    KVCHAOS_FINISH_REQUEST(req);
    return n.ClusterInfo(false);
  };
  Route(*admin_, n, "GetClusterInfo", cluster_info);
  Route(*meta_, n, "GetClusterInfo", cluster_info);
  Route(*admin_, n, "GetManagerClusterInfo", [&n](JsonRequest& req) -> Result<nlohmann::json> {
    KVCHAOS_FINISH_REQUEST(req);
    return n.ClusterInfo(true);
  });
  // Unhealthy is 503 (load balancers and probes read the HTTP status) with every check listed.
  RouteRaw(*admin_, "CheckHealth", [&n](const httplib::Request& req, httplib::Response& res) {
    auto parsed = JsonRequest::Parse(req.body);
    if (!parsed.ok()) return Answer(res, parsed.status(), nlohmann::json::object(), n);
    if (Status s = parsed->Finish(); !s.ok()) return Answer(res, s, nlohmann::json::object(), n);
    nlohmann::json body = n.Health();
    Status s = body.value("healthy", false)
                   ? Status::Ok()
                   : Status::Unavailable("node '" + n.node_id() + "' is unhealthy: " + body.value("problems", ""));
    Answer(res, s, std::move(body), n);
  });
  Route(*admin_, n, "ListNodes", [&n](JsonRequest& req) -> Result<nlohmann::json> {
    KVCHAOS_FINISH_REQUEST(req);
    return n.ListNodes();
  });
  Route(*admin_, n, "LeaderDemote", [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto forbid_ms = req.Int("forbid_campaign_time_ms", false);
    KVCHAOS_FINISH_REQUEST(req);
    if (forbid_ms && *forbid_ms < 0) return Status::InvalidArgument("forbid_campaign_time_ms: must be >= 0");
    std::optional<Duration> forbid;
    if (forbid_ms) forbid = Millis(*forbid_ms);
    return Empty(n.Demote(forbid));
  });

  Route(*meta_, n, "StartWriteCache", [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto keys = req.Strings("keys", true);
    auto storage = req.String("storage", false);
    KVCHAOS_FINISH_REQUEST(req);
    auto session = n.StartWriteCache(*keys, storage.value_or(""));
    if (!session.ok()) return session.status();
    return nlohmann::json{{"session", wire::WriteSessionToJson(*session)}};
  });
  Route(*meta_, n, "FinishWriteCache", [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto session_id = req.String("session_id", true);
    auto keys = req.Strings("keys", true);
    auto checksums = req.Ints("checksums", false);
    auto present = req.Bools("checksum_present", false);
    auto layouts_json = req.Array("iov_layouts", false);  // absent from older clients
    KVCHAOS_FINISH_REQUEST(req);
    std::vector<meta::IovLayout> layouts;
    if (layouts_json) {
      auto parsed = wire::IovLayoutsFromJson(*layouts_json, "iov_layouts");
      if (!parsed.ok()) return parsed.status();
      layouts = std::move(*parsed);
    }
    return Empty(n.FinishWriteCache(*session_id, *keys, checksums.value_or(std::vector<int64_t>{}),
                                    present.value_or(std::vector<uint8_t>{}), layouts));
  });
  Route(*meta_, n, "GetCacheLocation", [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto keys = req.Strings("keys", true);
    KVCHAOS_FINISH_REQUEST(req);
    auto locations = n.GetCacheLocation(*keys);
    if (!locations.ok()) return locations.status();
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& l : *locations) arr.push_back(l ? l->ToJson() : nlohmann::json(nullptr));
    return nlohmann::json{{"locations", std::move(arr)}};
  });
  Route(*meta_, n, "RemoveCache", [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto keys = req.Strings("keys", true);
    KVCHAOS_FINISH_REQUEST(req);
    return Empty(n.RemoveCache(*keys));
  });
  Route(*meta_, n, "AddStorage", [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto storage = req.Object("storage", true);
    KVCHAOS_FINISH_REQUEST(req);
    auto config = meta::StorageConfig::FromJson(*storage);
    if (!config.ok()) return Status::InvalidArgument(config.status().message());
    // Validated here as well as in the registry, so a bad config is a 400, not a server error.
    if (Status v = config->Validate(); !v.ok()) return Status::InvalidArgument(v.message());
    return Empty(n.AddStorage(*config));
  });
  Route(*meta_, n, "GetStorageConfig", [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto name = req.String("storage", true);
    KVCHAOS_FINISH_REQUEST(req);
    auto config = n.GetStorageConfig(*name);
    if (!config.ok()) return config.status();
    return nlohmann::json{{"storage", config->ToJson()}};
  });
}

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
