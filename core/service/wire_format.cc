// JSON forms of the node API's answers (see wire_format.h).
#include "core/service/wire_format.h"

namespace kvchaos::service::wire {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kInvalidConfig:
    case StatusCode::kChecksumUnavailable:
    case StatusCode::kInlineHeaderInvalid: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kStaleFencingToken: return 409;
    case StatusCode::kNotLeader: return 421;
    case StatusCode::kUnavailable:
    case StatusCode::kStoreUnhealthy:
    case StatusCode::kLockLost:
    case StatusCode::kTimeout: return 503;
    default: return 500;
  }
}

Status StatusFromAnswer(const nlohmann::json& answer) {
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

nlohmann::json WriteSessionToJson(const meta::WriteSession& s) {
  nlohmann::json locations = nlohmann::json::array();
  for (const auto& l : s.locations) locations.push_back(l.ToJson());
  nlohmann::json to_write = nlohmann::json::array();
  for (uint8_t w : s.to_write) to_write.push_back(w != 0);
  return {{"session_id", s.session_id}, {"storage", s.storage},   {"keys", s.keys},
          {"locations", locations},     {"to_write", to_write},   {"integrity", s.integrity.ToJson()}};
}

Result<meta::WriteSession> WriteSessionFromJson(const nlohmann::json& j) {
  meta::WriteSession s;
  try {
    s.session_id = j.at("session_id").get<std::string>();
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

}  // namespace kvchaos::service::wire
