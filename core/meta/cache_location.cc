// JSON form of CacheLocation, compatible with records that carry no checksum or IOV layout.
#include "core/meta/cache_location.h"

#include "core/common/json_text.h"

namespace kvchaos::meta {
namespace {

Status Bad(std::string_view path, std::string_view field, std::string_view problem) {
  return Status::InvalidArgument(std::string(path) + "." + std::string(field) + ": " + std::string(problem));
}

}  // namespace

std::string_view LocationStatusName(LocationStatus status) {
  return status == LocationStatus::kServing ? "serving" : "writing";
}

nlohmann::json CacheLocation::ToJson() const {
  nlohmann::json j{{"storage", storage}, {"uri", uri}, {"status", std::string(LocationStatusName(status))}};
  if (!write_session.empty()) j["write_session"] = write_session;
  j["checksum"] = checksum;
  j["checksum_present"] = checksum_present;
  if (checksum_present) j["checksum_algo"] = std::string(integrity::ChecksumAlgoName(checksum_algo));
  if (iov_layout.known()) j["iov_layout"] = iov_layout.ToJson();
  if (inline_header_version != 0) j["inline_header_version"] = inline_header_version;
  return j;
}

void CacheLocation::AppendJson(std::string* out) const {
  // nlohmann's object is a std::map: ToJson's keys come out sorted, and so must these.
  *out += "{\"checksum\":";
  *out += std::to_string(checksum);
  if (checksum_present) {
    *out += ",\"checksum_algo\":";
    AppendJsonString(out, integrity::ChecksumAlgoName(checksum_algo));
  }
  *out += checksum_present ? ",\"checksum_present\":true" : ",\"checksum_present\":false";
  if (inline_header_version != 0) *out += ",\"inline_header_version\":" + std::to_string(inline_header_version);
  if (iov_layout.known()) {
    *out += ",\"iov_layout\":";
    iov_layout.AppendJson(out);
  }
  *out += ",\"status\":";
  AppendJsonString(out, LocationStatusName(status));
  *out += ",\"storage\":";
  AppendJsonString(out, storage);
  *out += ",\"uri\":";
  AppendJsonString(out, uri);
  if (!write_session.empty()) {
    *out += ",\"write_session\":";
    AppendJsonString(out, write_session);
  }
  out->push_back('}');
}

std::string LocationsJson(std::span<const CacheLocation> locations) {
  std::string out = "[";
  for (size_t i = 0; i < locations.size(); ++i) {
    if (i > 0) out.push_back(',');
    locations[i].AppendJson(&out);
  }
  out.push_back(']');
  return out;
}

Result<CacheLocation> CacheLocation::FromJson(const nlohmann::json& j, std::string_view path) {
  if (!j.is_object()) return Status::InvalidArgument(std::string(path) + ": expected an object, got " + j.type_name());
  CacheLocation loc;
  auto str = [&](const char* field, std::string* out, bool required) -> Status {
    auto it = j.find(field);
    if (it == j.end()) return required ? Bad(path, field, "missing") : Status::Ok();
    if (!it->is_string()) return Bad(path, field, std::string("expected a string, got ") + it->type_name());
    *out = it->get<std::string>();
    return Status::Ok();
  };
  KVCHAOS_RETURN_IF_ERROR(str("storage", &loc.storage, true));
  KVCHAOS_RETURN_IF_ERROR(str("uri", &loc.uri, true));
  KVCHAOS_RETURN_IF_ERROR(str("write_session", &loc.write_session, false));
  std::string status = "serving";
  KVCHAOS_RETURN_IF_ERROR(str("status", &status, false));
  if (status == "serving") {
    loc.status = LocationStatus::kServing;
  } else if (status == "writing") {
    loc.status = LocationStatus::kWriting;
  } else {
    return Bad(path, "status", "unknown status '" + status + "' (known: writing, serving)");
  }

  auto checksum = j.find("checksum");
  if (checksum != j.end()) {
    if (!checksum->is_number_integer()) {
      return Bad(path, "checksum", std::string("expected an integer, got ") + checksum->type_name());
    }
    loc.checksum = checksum->is_number_unsigned() ? static_cast<int64_t>(checksum->get<uint64_t>())
                                                  : checksum->get<int64_t>();
  }
  auto present = j.find("checksum_present");
  if (present != j.end()) {
    if (!present->is_boolean()) {
      return Bad(path, "checksum_present", std::string("expected a boolean, got ") + present->type_name());
    }
    loc.checksum_present = present->get<bool>();
  } else {
    // Records without the flag used 0 as "absent" (upstream's sentinel).
    loc.checksum_present = loc.checksum != 0;
  }
  std::string algo;
  KVCHAOS_RETURN_IF_ERROR(str("checksum_algo", &algo, false));
  if (!algo.empty()) {
    if (!integrity::ChecksumAlgoFromName(algo, &loc.checksum_algo)) {
      return Bad(path, "checksum_algo", "unknown checksum algorithm '" + algo + "'");
    }
  } else if (loc.checksum_present) {
    // Upstream records carry no algorithm: crc32_xor_int64 was its only one.
    loc.checksum_algo = integrity::ChecksumAlgo::kCrc32XorInt64;
  }
  auto layout = j.find("iov_layout");
  if (layout != j.end()) {
    Result<IovLayout> parsed = IovLayout::FromJson(*layout, std::string(path) + ".iov_layout");
    if (!parsed.ok()) return parsed.status();
    loc.iov_layout = std::move(*parsed);
  }
  auto header = j.find("inline_header_version");
  if (header != j.end()) {
    if (!header->is_number_integer() || header->get<int64_t>() < 0) {
      return Bad(path, "inline_header_version", std::string("expected an integer >= 0, got ") + header->dump());
    }
    loc.inline_header_version = header->get<int64_t>();
  }
  if (!loc.checksum_present) {
    loc.checksum = 0;
    loc.checksum_algo = integrity::ChecksumAlgo::kUnspecified;
  }
  return loc;
}

}  // namespace kvchaos::meta
