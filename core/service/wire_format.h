// Wire format of the node's HTTP/JSON API, shared by the server (http_api.cc) and the HTTP
// MetaClient (core/client/http_meta_client.cc) so both sides read the same field names.
//
// Every answer is a JSON object with "code" (a StatusCodeName: "OK", "NotLeader", …) and, when
// not OK, "message"; NotLeader answers also carry "leader_endpoint" (a NodeEndpoint or null).
// Endpoints are POST /api/<Call> with a JSON object body (GET works for calls without arguments).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/meta/cache_manager.h"

namespace kvchaos::service::wire {

inline constexpr std::string_view kApiPrefix = "/api/";

// HTTP status for a Status code (400 bad request, 421 not leader, 404, 409 stale token, 503, 500).
int HttpStatusFor(StatusCode code);
// The Status an answer carries ("code" + "message"); Internal when the answer is malformed.
Status StatusFromAnswer(const nlohmann::json& answer);

nlohmann::json WriteSessionToJson(const meta::WriteSession& session);
Result<meta::WriteSession> WriteSessionFromJson(const nlohmann::json& json);

}  // namespace kvchaos::service::wire
