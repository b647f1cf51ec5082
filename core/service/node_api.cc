// Routes of the node's API (see node_api.h) and their strict request parsing.
#include "core/service/node_api.h"

#include <nlohmann/json.hpp>

#include "core/common/json_text.h"
#include "core/service/json_request.h"
#include "core/service/meta_node.h"
#include "core/service/wire_format.h"

namespace kvchaos::service {
namespace {

using JsonHandler = std::function<Result<nlohmann::json>(JsonRequest&)>;

ApiReply Answer(const Status& status, nlohmann::json body, MetaNode& node) {
  body["code"] = StatusCodeName(status.code());
  if (!status.ok()) {
    body["message"] = status.message();
    if (status.code() == StatusCode::kNotLeader) body["leader_endpoint"] = node.LeaderEndpointJson();
  }
  return ApiReply{wire::HttpStatusFor(status.code()), std::move(body)};
}

// The request bounds of the node's config (HttpLimits), for every transport.
JsonLimits LimitsOf(const MetaNode& node) {
  const HttpLimits& http = node.config().http;
  JsonLimits limits;
  limits.max_array_entries = static_cast<size_t>(http.max_keys_per_call);
  limits.max_values = static_cast<size_t>(http.max_keys_per_call) * HttpLimits::kValuesPerKey + 1024;
  return limits;
}

// Runs the handler on the parsed request, answers its result or its error.
std::function<ApiReply(JsonRequest&)> Json(MetaNode& node, JsonHandler handler) {
  return [&node, handler = std::move(handler)](JsonRequest& req) {
    auto result = handler(req);
    if (!result.ok()) return Answer(result.status(), nlohmann::json::object(), node);
    return Answer(Status::Ok(), std::move(*result), node);
  };
}

// Runs the handler's reads, then stops with 400 unless every field was fine.
#define KVCHAOS_FINISH_REQUEST(req)                      \
  do {                                                   \
    if (Status s_ = (req).Finish(); !s_.ok()) return s_; \
  } while (0)

Result<nlohmann::json> Empty(const Status& s) {
  if (!s.ok()) return s;
  return nlohmann::json::object();
}

}  // namespace

NodeApi::NodeApi(MetaNode& node) : node_(node) { Routes(); }

const NodeApi::Handler* NodeApi::Route(ApiPort port, std::string_view call) const {
  const auto& routes = port == ApiPort::kMeta ? meta_ : admin_;
  auto it = routes.find(call);
  return it == routes.end() ? nullptr : &it->second;
}

ApiReply NodeApi::NoSuchCall(ApiPort port, std::string_view call) const {
  return Answer(Status::NotFound("no call '" + std::string(call) + "' on the " +
                                 (port == ApiPort::kMeta ? "meta" : "admin") + " port"),
                nlohmann::json::object(), node_);
}

ApiAnswer NodeApi::Handle(ApiPort port, std::string_view call, std::string_view body) const {
  const Handler* route = Route(port, call);
  if (route == nullptr) return Text(NoSuchCall(port, call));
  auto parsed = JsonRequest::Parse(body, LimitsOf(node_));
  if (!parsed.ok()) return Text(Answer(parsed.status(), nlohmann::json::object(), node_));
  return Text((*route)(*parsed));
}

ApiReply NodeApi::HandleValue(ApiPort port, std::string_view call, nlohmann::json body) const {
  const Handler* route = Route(port, call);
  if (route == nullptr) return NoSuchCall(port, call);
  auto parsed = JsonRequest::FromValue(std::move(body), LimitsOf(node_));
  if (!parsed.ok()) return Answer(parsed.status(), nlohmann::json::object(), node_);
  return (*route)(*parsed);
}

ApiAnswer NodeApi::Text(const ApiReply& reply) { return ApiAnswer{reply.http_status, DumpJson(reply.body)}; }

std::vector<std::string> NodeApi::Calls(ApiPort port) const {
  std::vector<std::string> out;
  for (const auto& [name, handler] : port == ApiPort::kMeta ? meta_ : admin_) out.push_back(name);
  return out;
}

void NodeApi::Routes() {
  MetaNode& n = node_;
  auto cluster_info = [&n](JsonRequest& req) -> Result<nlohmann::json> {
    KVCHAOS_FINISH_REQUEST(req);
    return n.ClusterInfo(false);
  };
  admin_["GetClusterInfo"] = Json(n, cluster_info);
  meta_["GetClusterInfo"] = Json(n, cluster_info);
  admin_["GetManagerClusterInfo"] = Json(n, [&n](JsonRequest& req) -> Result<nlohmann::json> {
    KVCHAOS_FINISH_REQUEST(req);
    return n.ClusterInfo(true);
  });
  // Unhealthy is 503 (load balancers and probes read the HTTP status) with every check listed.
  admin_["CheckHealth"] = [&n](JsonRequest& req) {
    if (Status s = req.Finish(); !s.ok()) return Answer(s, nlohmann::json::object(), n);
    nlohmann::json body = n.Health();
    Status s = body.value("healthy", false)
                   ? Status::Ok()
                   : Status::Unavailable("node '" + n.node_id() + "' is unhealthy: " + body.value("problems", ""));
    return Answer(s, std::move(body), n);
  };
  admin_["ListNodes"] = Json(n, [&n](JsonRequest& req) -> Result<nlohmann::json> {
    KVCHAOS_FINISH_REQUEST(req);
    return n.ListNodes();
  });
  admin_["LeaderDemote"] = Json(n, [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto forbid_ms = req.Int("forbid_campaign_time_ms", false);
    KVCHAOS_FINISH_REQUEST(req);
    if (forbid_ms && *forbid_ms < 0) return Status::InvalidArgument("forbid_campaign_time_ms: must be >= 0");
    std::optional<Duration> forbid;
    if (forbid_ms) forbid = Millis(*forbid_ms);
    return Empty(n.Demote(forbid));
  });

  meta_["StartWriteCache"] = Json(n, [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto keys = req.Strings("keys", true);
    auto storage = req.String("storage", false);
    auto request_id = req.String("request_id", false);  // absent from older clients
    KVCHAOS_FINISH_REQUEST(req);
    auto session = n.StartWriteCache(*keys, storage.value_or(""), request_id.value_or(""));
    if (!session.ok()) return session.status();
    return nlohmann::json{{"session", wire::WriteSessionToJson(*session)}};
  });
  meta_["FinishWriteCache"] = Json(n, [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto session_id = req.String("session_id", true);
    auto keys = req.Strings("keys", true);
    auto checksums = req.Ints("checksums", false);
    auto present = req.Bools("checksum_present", false);
    auto layouts_json = req.Array("iov_layouts", false);  // absent from older clients
    auto header_version = req.Int("inline_header_version", false);  // absent: blocks without headers
    KVCHAOS_FINISH_REQUEST(req);
    std::vector<meta::IovLayout> layouts;
    if (layouts_json) {
      auto parsed = wire::IovLayoutsFromJson(*layouts_json, "iov_layouts");
      if (!parsed.ok()) return parsed.status();
      layouts = std::move(*parsed);
    }
    return Empty(n.FinishWriteCache(*session_id, *keys, checksums.value_or(std::vector<int64_t>{}),
                                    present.value_or(std::vector<uint8_t>{}), layouts, header_version.value_or(0)));
  });
  meta_["GetCacheLocation"] = Json(n, [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto keys = req.Strings("keys", true);
    KVCHAOS_FINISH_REQUEST(req);
    uint64_t token = 0;
    auto locations = n.GetCacheLocation(*keys, &token);
    if (!locations.ok()) return locations.status();
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& l : *locations) arr.push_back(l ? l->ToJson() : nlohmann::json(nullptr));
    return wire::LocationsAnswerToJson(std::move(arr), n.node_id(), token);
  });
  meta_["RemoveCache"] = Json(n, [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto keys = req.Strings("keys", true);
    KVCHAOS_FINISH_REQUEST(req);
    return Empty(n.RemoveCache(*keys));
  });
  meta_["AddStorage"] = Json(n, [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto storage = req.Object("storage", true);
    KVCHAOS_FINISH_REQUEST(req);
    auto config = meta::StorageConfig::FromJson(*storage);
    if (!config.ok()) return Status::InvalidArgument(config.status().message());
    // Validated here as well as in the registry, so a bad config is a 400, not a server error.
    if (Status v = config->Validate(); !v.ok()) return Status::InvalidArgument(v.message());
    return Empty(n.AddStorage(*config));
  });
  meta_["GetStorageConfig"] = Json(n, [&n](JsonRequest& req) -> Result<nlohmann::json> {
    auto name = req.String("storage", true);
    KVCHAOS_FINISH_REQUEST(req);
    auto config = n.GetStorageConfig(*name);
    if (!config.ok()) return config.status();
    return nlohmann::json{{"storage", config->ToJson()}};
  });
  meta_["ListStorages"] = Json(n, [&n](JsonRequest& req) -> Result<nlohmann::json> {
    KVCHAOS_FINISH_REQUEST(req);
    auto storages = n.ListStorages();
    if (!storages.ok()) return storages.status();
    nlohmann::json list = nlohmann::json::array();
    for (const meta::StorageConfig& c : *storages) list.push_back(c.ToJson());
    return nlohmann::json{{"storages", std::move(list)}};
  });
}

}  // namespace kvchaos::service
