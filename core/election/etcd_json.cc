// etcd JSON gateway requests and answers (see the header).
#include "core/election/etcd_json.h"

#include <charconv>

#include "core/common/base64.h"

namespace kvchaos::election::etcd_json {

namespace {

Status Bad(std::string_view what, const std::string& problem) {
  return Status::Unavailable(std::string(what) + ": etcd answered " + problem);
}

Result<std::string> Bytes(const nlohmann::json& object, std::string_view field, std::string_view what) {
  const std::string name(field);
  if (!object.contains(name)) return std::string();
  if (!object[name].is_string()) return Bad(what, "'" + name + "' that is not a string");
  std::optional<std::string> decoded = Base64Decode(object[name].get_ref<const std::string&>());
  if (!decoded) return Bad(what, "'" + name + "' that is not base64");
  return std::move(*decoded);
}

const char* TargetField(std::string_view target) {
  if (target == "CREATE") return "create_revision";
  if (target == "MOD") return "mod_revision";
  if (target == "VERSION") return "version";
  return "lease";
}

}  // namespace

Result<int64_t> Int64(const nlohmann::json& object, std::string_view field, std::string_view what) {
  const std::string name(field);
  if (!object.is_object()) return Bad(what, "something that is not an object where '" + name + "' was expected");
  if (!object.contains(name)) return int64_t{0};
  const nlohmann::json& v = object[name];
  if (v.is_number_integer()) return v.get<int64_t>();
  if (!v.is_string()) return Bad(what, "'" + name + "' that is neither a number nor a decimal string");
  const std::string& s = v.get_ref<const std::string&>();
  int64_t out = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return Bad(what, "'" + name + "' = '" + s.substr(0, 40) + "', not an int64");
  }
  return out;
}

Result<std::vector<KeyRecord>> Records(const nlohmann::json& range, std::string_view what) {
  if (!range.is_object()) return Bad(what, "a range answer that is not an object");
  std::vector<KeyRecord> out;
  if (!range.contains("kvs")) return out;
  if (!range["kvs"].is_array()) return Bad(what, "'kvs' that is not an array");
  for (const nlohmann::json& kv : range["kvs"]) {
    if (!kv.is_object()) return Bad(what, "a kvs entry that is not an object");
    KeyRecord r;
    auto key = Bytes(kv, "key", what);
    if (!key.ok()) return key.status();
    auto value = Bytes(kv, "value", what);
    if (!value.ok()) return value.status();
    r.key = std::move(*key);
    r.value = std::move(*value);
    for (auto [field, into] : {std::pair{"create_revision", &r.create_revision}, std::pair{"mod_revision", &r.mod_revision},
                               std::pair{"lease", &r.lease}}) {
      auto n = Int64(kv, field, what);
      if (!n.ok()) return n.status();
      *into = *n;
    }
    if (r.create_revision <= 0) return Bad(what, "a key without a create_revision");
    out.push_back(std::move(r));
  }
  return out;
}

bool Succeeded(const nlohmann::json& txn) {
  return txn.is_object() && txn.contains("succeeded") && txn["succeeded"].is_boolean() && txn["succeeded"].get<bool>();
}

Result<nlohmann::json> TxnResponse(const nlohmann::json& txn, size_t i, std::string_view kind, std::string_view what) {
  if (!txn.is_object() || !txn.contains("responses") || !txn["responses"].is_array() || txn["responses"].size() <= i) {
    return Bad(what, "a transaction without response " + std::to_string(i));
  }
  const nlohmann::json& r = txn["responses"][i];
  const std::string name(kind);
  if (!r.is_object() || !r.contains(name) || !r[name].is_object()) {
    return Bad(what, "a transaction whose response " + std::to_string(i) + " is not a " + name);
  }
  return r[name];
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xff) end.pop_back();
  if (end.empty()) return std::string(1, '\0');
  end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
  return end;
}

nlohmann::json RangeOp(std::string_view key) { return {{"request_range", {{"key", Base64Encode(key)}}}}; }

nlohmann::json PutOp(std::string_view key, std::string_view value, int64_t lease) {
  nlohmann::json put = {{"key", Base64Encode(key)}, {"value", Base64Encode(value)}};
  if (lease != 0) put["lease"] = std::to_string(lease);
  return {{"request_put", put}};
}

nlohmann::json DeleteOp(std::string_view key) { return {{"request_delete_range", {{"key", Base64Encode(key)}}}}; }

nlohmann::json CompareInt(std::string_view key, std::string_view target, int64_t value) {
  return {{"key", Base64Encode(key)},
          {"target", std::string(target)},
          {"result", "EQUAL"},
          {TargetField(target), std::to_string(value)}};
}

nlohmann::json CompareValue(std::string_view key, std::string_view value) {
  return {{"key", Base64Encode(key)}, {"target", "VALUE"}, {"result", "EQUAL"}, {"value", Base64Encode(value)}};
}

}  // namespace kvchaos::election::etcd_json
