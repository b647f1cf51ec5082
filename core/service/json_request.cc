// Strict JSON field reading for the node's HTTP API (see json_request.h).
#include "core/service/json_request.h"

namespace kvchaos::service {

namespace {

// Watches the parser's events: counts entries per open array and values in all, tracks depth and
// the top-level field being read, and drops every value once a bound is passed.
class BoundedParse {
 public:
  explicit BoundedParse(const JsonLimits& limits) : limits_(limits) {}

  bool Event(int depth, nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (!error_.empty()) return false;
    if (event == E::key && depth == 1) field_ = parsed.get<std::string>();
    if (event == E::object_start || event == E::array_start || event == E::value) {
      if (!open_.empty() && open_.back().is_array && ++open_.back().entries > limits_.max_array_entries) {
        return Fail(Field() + ": more than " + std::to_string(limits_.max_array_entries) + " entries (" +
                    limits_.array_limit_name + ")");
      }
      if (++values_ > limits_.max_values) {
        return Fail("request body: more than " + std::to_string(limits_.max_values) + " JSON values (a bound set by " +
                    limits_.array_limit_name + ")");
      }
    }
    if (event == E::object_start || event == E::array_start) {
      if (depth > limits_.max_depth) {
        return Fail(Field() + ": nested deeper than " + std::to_string(limits_.max_depth) + " levels");
      }
      open_.push_back(Open{event == E::array_start, 0});
    } else if ((event == E::object_end || event == E::array_end) && !open_.empty()) {
      open_.pop_back();
    }
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  struct Open {
    bool is_array;
    size_t entries;
  };
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  std::string Field() const { return field_.empty() ? std::string("request body") : field_; }

  const JsonLimits& limits_;
  std::vector<Open> open_;
  size_t values_ = 0;
  std::string field_;
  std::string error_;
};

// Feeds `v` to `bounds` as the parser would report it (depth = containers open around the event).
bool WalkBounds(BoundedParse& bounds, const nlohmann::json& v, int depth) {
  using E = nlohmann::json::parse_event_t;
  static const nlohmann::json kNone;
  if (!v.is_structured()) return bounds.Event(depth, E::value, v);
  if (!bounds.Event(depth, v.is_object() ? E::object_start : E::array_start, kNone)) return false;
  for (auto it = v.begin(); it != v.end(); ++it) {
    // Only a top-level key is read (it names the field in messages).
    if (v.is_object() && !bounds.Event(depth + 1, E::key, depth == 0 ? nlohmann::json(it.key()) : kNone)) return false;
    if (!WalkBounds(bounds, *it, depth + 1)) return false;
  }
  return bounds.Event(depth, v.is_object() ? E::object_end : E::array_end, kNone);
}

}  // namespace

Result<JsonRequest> JsonRequest::FromValue(nlohmann::json body, const JsonLimits& limits) {
  if (body.is_null()) return JsonRequest(nlohmann::json::object());
  BoundedParse bounds(limits);
  if (!WalkBounds(bounds, body, 0)) return Status::InvalidArgument(bounds.error());
  if (!body.is_object()) return Status::InvalidArgument("request body must be a JSON object");
  return JsonRequest(std::move(body));
}

Result<JsonRequest> JsonRequest::Parse(std::string_view body, const JsonLimits& limits) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return JsonRequest(nlohmann::json::object());
  BoundedParse bounds(limits);
  nlohmann::json j = nlohmann::json::parse(
      body, [&bounds](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        return bounds.Event(depth, event, parsed);
      },
      /*allow_exceptions=*/false);
  if (!bounds.error().empty()) return Status::InvalidArgument(bounds.error());
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
