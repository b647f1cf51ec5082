// Strict JSON field reading for the node's HTTP API (see json_request.h).
#include "core/service/json_request.h"

namespace kvchaos::service {

Result<JsonRequest> JsonRequest::Parse(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return JsonRequest(nlohmann::json::object());
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("request body is not valid JSON");
  if (!j.is_object()) return Status::InvalidArgument("request body must be a JSON object");
  return JsonRequest(std::move(j));
}

void JsonRequest::Fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

const nlohmann::json* JsonRequest::Find(std::string_view field, bool required) {
  read_.emplace(field);
  auto it = body_.find(std::string(field));
  if (it == body_.end() || it->is_null()) {
    if (required) Fail(std::string(field) + ": missing");
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> JsonRequest::String(std::string_view field, bool required) {
  const nlohmann::json* v = Find(field, required);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    Fail(std::string(field) + ": expected a string");
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<int64_t> JsonRequest::Int(std::string_view field, bool required) {
  const nlohmann::json* v = Find(field, required);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer()) {
    Fail(std::string(field) + ": expected an integer");
    return std::nullopt;
  }
  return v->get<int64_t>();
}

std::optional<nlohmann::json> JsonRequest::Object(std::string_view field, bool required) {
  const nlohmann::json* v = Find(field, required);
  if (v == nullptr) return std::nullopt;
  if (!v->is_object()) {
    Fail(std::string(field) + ": expected an object");
    return std::nullopt;
  }
  return *v;
}

std::optional<nlohmann::json> JsonRequest::Array(std::string_view field, bool required) {
  const nlohmann::json* v = Find(field, required);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) {
    Fail(std::string(field) + ": expected an array");
    return std::nullopt;
  }
  return *v;
}

namespace {
template <typename T, typename Check>
std::optional<std::vector<T>> ReadArray(const nlohmann::json* v, std::string_view field, std::string_view what,
                                        Check check, std::string* error) {
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) {
    if (error->empty()) *error = std::string(field) + ": expected an array";
    return std::nullopt;
  }
  std::vector<T> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& e = (*v)[i];
    if (!check(e)) {
      if (error->empty()) *error = std::string(field) + "[" + std::to_string(i) + "]: expected " + std::string(what);
      return std::nullopt;
    }
    out.push_back(e.get<T>());
  }
  return out;
}
}  // namespace

std::optional<std::vector<std::string>> JsonRequest::Strings(std::string_view field, bool required) {
  return ReadArray<std::string>(Find(field, required), field, "a string",
                                [](const nlohmann::json& e) { return e.is_string(); }, &error_);
}

std::optional<std::vector<int64_t>> JsonRequest::Ints(std::string_view field, bool required) {
  return ReadArray<int64_t>(Find(field, required), field, "an integer",
                            [](const nlohmann::json& e) { return e.is_number_integer(); }, &error_);
}

std::optional<std::vector<uint8_t>> JsonRequest::Bools(std::string_view field, bool required) {
  auto v = ReadArray<bool>(Find(field, required), field, "a boolean",
                           [](const nlohmann::json& e) { return e.is_boolean(); }, &error_);
  if (!v) return std::nullopt;
  return std::vector<uint8_t>(v->begin(), v->end());
}

Status JsonRequest::Finish() {
  if (error_.empty()) {
    for (auto it = body_.begin(); it != body_.end(); ++it) {
      if (!read_.contains(it.key())) {
        error_ = it.key() + ": unknown field";
        break;
      }
    }
  }
  if (!error_.empty()) return Status::InvalidArgument(error_);
  return Status::Ok();
}

}  // namespace kvchaos::service
