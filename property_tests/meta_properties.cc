// Properties of the meta module: any CacheLocation survives its JSON round trip (presence flag
// included, so a checksum of 0 stays a checksum); a meta indexer accepts a write exactly when its
// fencing token is not older than every token accepted before, and a rejected write changes
// nothing. IOV layouts: any list of positive sizes survives encode (runs) -> JSON text -> decode
// unchanged, its runs are maximal, and a zero anywhere is refused. An entry's text is read by
// ParseLocationsText as the JSON parser reads it, for written text and damaged text alike.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/meta/cache_location.h"
#include "core/meta/local_meta_indexer.h"
#include "core/meta/locations_text.h"

namespace kvchaos::meta {
namespace {

using integrity::ChecksumAlgo;

// Printable ASCII strings: names and block ids are text (the meta layer rejects non-UTF-8 up front).
rc::Gen<std::string> GenText() { return rc::gen::container<std::string>(rc::gen::inRange<char>(32, 127)); }

RC_GTEST_PROP(MetaProperties, CacheLocationJsonRoundTrip,
              (int64_t checksum, bool serving, bool present, bool crc64)) {
  const std::string storage = *GenText();
  const std::string uri = *GenText();
  CacheLocation loc;
  loc.storage = storage;
  loc.uri = uri;
  loc.status = serving ? LocationStatus::kServing : LocationStatus::kWriting;
  loc.write_session = serving ? "" : "ws-1";
  loc.checksum_present = present;
  loc.checksum = present ? checksum : 0;
  loc.checksum_algo = present ? (crc64 ? ChecksumAlgo::kCrc64Full : ChecksumAlgo::kCrc32XorInt64) : ChecksumAlgo::kUnspecified;
  // Through text, as the indexers store it.
  Result<CacheLocation> back = CacheLocation::FromJson(nlohmann::json::parse(loc.ToJson().dump()), "loc");
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == loc);
}

// Sizes drawn from a few values, so neighbouring equal sizes (runs) are common, with an
// occasional large one.
rc::Gen<std::vector<uint64_t>> GenIovSizes() {
  return rc::gen::nonEmpty(rc::gen::container<std::vector<uint64_t>>(rc::gen::oneOf(
      rc::gen::element<uint64_t>(1, 2, 4096, 65536), rc::gen::inRange<uint64_t>(1, uint64_t{1} << 40))));
}

RC_GTEST_PROP(MetaProperties, IovLayoutRoundTripsAnySizeList, ()) {
  const std::vector<uint64_t> sizes = *GenIovSizes();
  Result<IovLayout> layout = IovLayout::FromSizes(sizes);
  RC_ASSERT(layout.ok());
  RC_ASSERT(layout->Sizes() == sizes);
  RC_ASSERT(layout->Matches(sizes));
  RC_ASSERT(layout->iov_count() == sizes.size());
  uint64_t total = 0;
  for (uint64_t s : sizes) total += s;
  RC_ASSERT(layout->total_bytes() == total);
  const auto& runs = layout->runs();
  for (size_t r = 1; r < runs.size(); ++r) RC_ASSERT(runs[r].size != runs[r - 1].size);  // maximal runs

  // As the indexers keep it: inside a location, through text.
  CacheLocation loc;
  loc.storage = "s";
  loc.uri = "u";
  loc.iov_layout = *layout;
  Result<CacheLocation> back = CacheLocation::FromJson(nlohmann::json::parse(loc.ToJson().dump()), "loc");
  RC_ASSERT(back.ok());
  RC_ASSERT(back->iov_layout == *layout);
  RC_ASSERT(back->iov_layout.Sizes() == sizes);
}

RC_GTEST_PROP(MetaProperties, IovLayoutRefusesAZeroSizeAnywhere, ()) {
  std::vector<uint64_t> sizes = *GenIovSizes();
  const size_t at = *rc::gen::inRange<size_t>(0, sizes.size() + 1);
  sizes.insert(sizes.begin() + static_cast<std::ptrdiff_t>(at), 0);
  Result<IovLayout> layout = IovLayout::FromSizes(sizes);
  RC_ASSERT(!layout.ok());
  RC_ASSERT(layout.status().message().find("[" + std::to_string(at) + "]") != std::string::npos);
  // Its JSON form with the zero is refused when read back as well.
  nlohmann::json runs = nlohmann::json::array();
  for (uint64_t s : sizes) runs.push_back(nlohmann::json::array({1, s}));
  RC_ASSERT(!IovLayout::FromJson(runs, "loc.iov_layout").ok());
}

// Any location the product can write: strings of any bytes (quotes, controls, invalid UTF-8
// included), the checksum normalised as the write path keeps it, layouts and header versions.
rc::Gen<CacheLocation> GenWrittenLocation() {
  return rc::gen::exec([] {
    CacheLocation loc;
    const auto bytes = [] { return *rc::gen::container<std::string>(rc::gen::oneOf(rc::gen::inRange<char>(32, 127), rc::gen::arbitrary<char>())); };
    loc.storage = bytes();
    loc.uri = bytes();
    loc.status = *rc::gen::element(LocationStatus::kWriting, LocationStatus::kServing);
    if (loc.status == LocationStatus::kWriting) loc.write_session = bytes();
    loc.checksum_algo = *rc::gen::element(ChecksumAlgo::kUnspecified, ChecksumAlgo::kCrc32XorInt64, ChecksumAlgo::kCrc64Full);
    loc.checksum_present = loc.checksum_algo != ChecksumAlgo::kUnspecified;
    loc.checksum = loc.checksum_present ? *rc::gen::arbitrary<int64_t>() : 0;
    if (*rc::gen::arbitrary<bool>()) loc.iov_layout = *IovLayout::FromSizes(*GenIovSizes());
    loc.inline_header_version = *rc::gen::element<int64_t>(0, 1, 2);
    return loc;
  });
}

// What the JSON parser alone makes of an entry's text; nullopt when it refuses it.
std::optional<std::vector<CacheLocation>> ParserAnswer(std::string_view text) {
  const nlohmann::json array = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (array.is_discarded() || !array.is_array()) return std::nullopt;
  std::vector<CacheLocation> out;
  for (const nlohmann::json& j : array) {
    Result<CacheLocation> loc = CacheLocation::FromJson(j, "p");
    if (!loc.ok()) return std::nullopt;
    out.push_back(*loc);
  }
  return out;
}

RC_GTEST_PROP(MetaProperties, EntryTextIsReadAsTheJsonParserReadsIt, ()) {
  const auto locations = *rc::gen::container<std::vector<CacheLocation>>(GenWrittenLocation());
  const std::string text = LocationsJson(locations);
  const std::optional<std::vector<CacheLocation>> expected = ParserAnswer(text);
  RC_ASSERT(expected.has_value());
  Result<std::vector<CacheLocation>> got = ParseLocationsText(text, "entry");
  RC_ASSERT(got.ok());
  RC_ASSERT(*got == *expected);
  // Damaged anywhere: whatever the narrow reader still takes, the parser reads the same way.
  std::string damaged = text;
  const size_t at = *rc::gen::inRange<size_t>(0, damaged.size());
  damaged[at] = *rc::gen::element('0', '1', '9', '-', '"', '\\', ',', ']', '}', 't', ' ');
  std::vector<CacheLocation> direct;
  if (ReadWrittenLocations(damaged, &direct)) {
    const std::optional<std::vector<CacheLocation>> parsed = ParserAnswer(damaged);
    RC_ASSERT(parsed.has_value());
    RC_ASSERT(direct == *parsed);
  }
}

RC_GTEST_PROP(MetaProperties, FencingAcceptsExactlyTheTokensNotOlderThanTheNewest, ()) {
  const auto tokens = *rc::gen::container<std::vector<uint64_t>>(rc::gen::inRange<uint64_t>(0, 20));
  LocalMetaIndexer indexer;
  uint64_t newest = 0;
  std::string value;  // what the record must hold after the accepted writes
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::vector<MetaWrite> w{{"k", {{"v", std::to_string(i)}}}};
    const Status s = indexer.Put(tokens[i], w);
    if (tokens[i] >= newest) {
      RC_ASSERT(s.ok());
      newest = tokens[i];
      value = std::to_string(i);
    } else {
      RC_ASSERT(s.code() == StatusCode::kStaleFencingToken);
    }
    const std::vector<std::string> keys{"k"};
    const auto got = indexer.Get(keys);
    RC_ASSERT(got.ok());
    if (value.empty()) {
      RC_ASSERT(!(*got)[0].has_value());
    } else {
      RC_ASSERT((*got)[0].has_value());
      RC_ASSERT((*got)[0]->at("v") == value);
    }
    RC_ASSERT(*indexer.NewestFencingToken() == newest);
  }
}

}  // namespace
}  // namespace kvchaos::meta
