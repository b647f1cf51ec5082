// Fuzz target: the JSON records of meta — CacheLocation, IovLayout, the API's iov_layouts and
// write sessions — from any JSON text. Checked in pairs: a record that parses is written back and
// parsed again, and must come back equal; every dump of input-derived JSON must succeed. An
// entry's text that the narrow reader of ParseLocationsText takes must read as the parser reads it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/json_text.h"
#include "core/meta/cache_location.h"
#include "core/meta/iov_layout.h"
#include "core/meta/locations_text.h"
#include "core/service/wire_format.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<kvchaos::meta::CacheLocation> direct;
  if (kvchaos::meta::ReadWrittenLocations(text, &direct)) {
    FUZZ_CHECK(j.is_array() && j.size() == direct.size(), "the narrow reader took text the parser does not read as an array");
    for (size_t i = 0; i < direct.size(); ++i) {
      auto parsed = kvchaos::meta::CacheLocation::FromJson(j[i], "fuzz");
      FUZZ_CHECK(parsed.ok() && *parsed == direct[i], "the narrow reader and the parser disagree on location " + std::to_string(i));
    }
  }
  if (j.is_discarded()) return 0;
  (void)kvchaos::DumpJson(j);  // input-derived JSON must always dump (invalid UTF-8 as U+FFFD)

  auto location = kvchaos::meta::CacheLocation::FromJson(j, "fuzz");
  if (location.ok()) {
    const nlohmann::json written = location->ToJson();
    auto back = kvchaos::meta::CacheLocation::FromJson(written, "fuzz.rewritten");
    FUZZ_CHECK(back.ok(), "a location's own JSON does not parse: " + back.status().ToString());
    FUZZ_CHECK(*back == *location, "a location changed through ToJson/FromJson: " + kvchaos::DumpJson(written));
  }
  auto layout = kvchaos::meta::IovLayout::FromJson(j, "fuzz");
  if (layout.ok()) {
    auto back = kvchaos::meta::IovLayout::FromJson(layout->ToJson(), "fuzz.rewritten");
    FUZZ_CHECK(back.ok() && *back == *layout, "a layout changed through ToJson/FromJson: " + layout->ToString());
    if (layout->known()) {
      const std::vector<uint64_t> sizes = layout->Sizes();
      FUZZ_CHECK(sizes.size() == layout->iov_count(), "Sizes() disagrees with iov_count()");
      FUZZ_CHECK(layout->Matches(sizes), "a layout does not match its own sizes");
    }
  }
  auto layouts = kvchaos::service::wire::IovLayoutsFromJson(j, "iov_layouts");
  if (layouts.ok()) {
    auto back = kvchaos::service::wire::IovLayoutsFromJson(kvchaos::service::wire::IovLayoutsToJson(*layouts), "again");
    FUZZ_CHECK(back.ok() && *back == *layouts, "iov_layouts changed through their JSON");
  }
  auto session = kvchaos::service::wire::WriteSessionFromJson(j);
  if (session.ok()) {
    auto back = kvchaos::service::wire::WriteSessionFromJson(kvchaos::service::wire::WriteSessionToJson(*session));
    FUZZ_CHECK(back.ok(), "a write session's own JSON does not parse: " + back.status().ToString());
  }
  return 0;
}
