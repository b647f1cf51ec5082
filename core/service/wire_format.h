// Wire format of the node's HTTP/JSON API, shared by the server (http_api.cc) and the HTTP
// MetaClient (core/client/http_meta_client.cc) so both sides read the same field names.
//
// Every answer is a JSON object with "code" (a StatusCodeName: "OK", "NotLeader", …) and, when
// not OK, "message"; NotLeader answers also carry "leader_endpoint" (a NodeEndpoint or null).
// Header-only, so the client module links without the service module.
// Endpoints are POST /api/<Call> with a JSON object body (GET works for calls without arguments).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/meta/cache_manager.h"

namespace kvchaos::service::wire {

inline constexpr std::string_view kApiPrefix = "/api/";

// HTTP status for a Status code (400 bad request, 401 no admin token, 421 not leader, 404, 409 stale
// token or a conditional write's Conflict, 503, 500).
int HttpStatusFor(StatusCode code);
// The Status an answer carries ("code" + "message"); Internal when the answer is malformed.
Status StatusFromAnswer(const nlohmann::json& answer);

nlohmann::json WriteSessionToJson(const meta::WriteSession& session);
Result<meta::WriteSession> WriteSessionFromJson(const nlohmann::json& json);

// GetCacheLocation's answer: "locations" (one per key, null: none) and the optional "served_by"
// (the answering node's id) and "fencing_token" (the term it served under), so a client's history
// can say which node and term served a read. Nodes older than the fields send neither: the
// decoded ServedRead then says "unknown" (empty id, token 0).
nlohmann::json LocationsAnswerToJson(nlohmann::json locations, const std::string& served_by, uint64_t fencing_token);
struct ServedRead {
  std::string served_by;       // "" when the answer does not say
  uint64_t fencing_token = 0;  // 0 when the answer does not say
};
// A field of the wrong type is Internal naming it (a malformed answer).
Result<ServedRead> ServedReadFromJson(const nlohmann::json& answer);

// FinishWriteCache's optional "iov_layouts": one entry per key, each the layout its checksum was
// computed over as [[count, size], ...], or null where the writer has none. A bad entry is
// InvalidArgument naming it ("iov_layouts[1][0][1]: IOV size 0").
nlohmann::json IovLayoutsToJson(std::span<const meta::IovLayout> layouts);
Result<std::vector<meta::IovLayout>> IovLayoutsFromJson(const nlohmann::json& json, std::string_view field);

// --- definitions ---


inline int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kInvalidConfig:
    case StatusCode::kChecksumUnavailable:
    case StatusCode::kInlineHeaderInvalid: return 400;
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kStaleFencingToken:
    case StatusCode::kConflict: return 409;
    case StatusCode::kNotLeader: return 421;
    case StatusCode::kUnavailable:
    case StatusCode::kStoreUnhealthy:
    case StatusCode::kLockLost:
    case StatusCode::kTimeout: return 503;
    default: return 500;
  }
}

inline Status StatusFromAnswer(const nlohmann::json& answer) {
  if (!answer.is_object() || !answer.contains("code") || !answer["code"].is_string()) {
    return Status::Internal("node answer has no \"code\" string");
  }
  StatusCode code;
  if (!StatusCodeFromName(answer["code"].get<std::string>(), &code)) {
    return Status::Internal("node answer has unknown code '" + answer["code"].get<std::string>() + "'");
  }
  if (code == StatusCode::kOk) return Status::Ok();
  std::string message = answer.contains("message") && answer["message"].is_string() ? answer["message"].get<std::string>() : "";
  return Status(code, message);
}

inline nlohmann::json WriteSessionToJson(const meta::WriteSession& s) {
  nlohmann::json locations = nlohmann::json::array();
  for (const auto& l : s.locations) locations.push_back(l.ToJson());
  nlohmann::json to_write = nlohmann::json::array();
  for (uint8_t w : s.to_write) to_write.push_back(w != 0);
  return {{"session_id", s.session_id}, {"fencing_token", s.fencing_token}, {"storage", s.storage},
          {"keys", s.keys},             {"locations", std::move(locations)}, {"to_write", std::move(to_write)},
          {"integrity", s.integrity.ToJson()}};
}

inline Result<meta::WriteSession> WriteSessionFromJson(const nlohmann::json& j) {
  meta::WriteSession s;
  try {
    s.session_id = j.at("session_id").get<std::string>();
    s.fencing_token = j.value("fencing_token", uint64_t{0});  // absent from nodes older than the field
    s.storage = j.at("storage").get<std::string>();
    s.keys = j.at("keys").get<std::vector<std::string>>();
    for (bool w : j.at("to_write").get<std::vector<bool>>()) s.to_write.push_back(w ? 1 : 0);
    const auto& locations = j.at("locations");
    for (size_t i = 0; i < locations.size(); ++i) {
      auto l = meta::CacheLocation::FromJson(locations[i], "session.locations[" + std::to_string(i) + "]");
      if (!l.ok()) return l.status();
      s.locations.push_back(std::move(*l));
    }
    auto integrity = integrity::DataIntegrityConfig::FromJson(j.at("integrity"), "session.integrity");
    if (!integrity.ok()) return integrity.status();
    s.integrity = *integrity;
  } catch (const nlohmann::json::exception& e) {
    return Status::Internal(std::string("malformed write session from the node: ") + e.what());
  }
  if (s.locations.size() != s.keys.size() || s.to_write.size() != s.keys.size()) {
    return Status::Internal("malformed write session from the node: per-key lists differ in length");
  }
  return s;
}

inline nlohmann::json LocationsAnswerToJson(nlohmann::json locations, const std::string& served_by,
                                            uint64_t fencing_token) {
  return {{"locations", std::move(locations)}, {"served_by", served_by}, {"fencing_token", fencing_token}};
}

inline Result<ServedRead> ServedReadFromJson(const nlohmann::json& answer) {
  ServedRead out;
  if (auto it = answer.find("served_by"); it != answer.end()) {
    if (!it->is_string()) return Status::Internal("GetCacheLocation answer: \"served_by\" is not a string");
    out.served_by = it->get<std::string>();
  }
  if (auto it = answer.find("fencing_token"); it != answer.end()) {
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
      return Status::Internal("GetCacheLocation answer: \"fencing_token\" is not a non-negative integer");
    }
    out.fencing_token = it->get<uint64_t>();
  }
  return out;
}

inline nlohmann::json IovLayoutsToJson(std::span<const meta::IovLayout> layouts) {
  nlohmann::json out = nlohmann::json::array();
  for (const meta::IovLayout& l : layouts) out.push_back(l.known() ? l.ToJson() : nlohmann::json(nullptr));
  return out;
}

inline Result<std::vector<meta::IovLayout>> IovLayoutsFromJson(const nlohmann::json& j, std::string_view field) {
  if (!j.is_array()) return Status::InvalidArgument(std::string(field) + ": expected an array");
  std::vector<meta::IovLayout> out;
  for (size_t i = 0; i < j.size(); ++i) {
    if (j[i].is_null()) {
      out.emplace_back();
      continue;
    }
    auto l = meta::IovLayout::FromJson(j[i], std::string(field) + "[" + std::to_string(i) + "]");
    if (!l.ok()) return l.status();
    out.push_back(std::move(*l));
  }
  return out;
}

}  // namespace kvchaos::service::wire
