// The text of a cache entry's `locations` field, read back into CacheLocations.
//
// Every entry the product writes is LocationsJson's text, and reading entries is the commonest
// call of the meta service; a new leader parses each key it serves once (ParsedEntries keeps what
// it parsed), and a JSON parser was most of that cost. So ParseLocationsText first tries a narrow
// reader that accepts exactly the text LocationsJson writes: it reads the fields, then writes the
// locations it read again and accepts only when the bytes are the same. Since every location
// survives LocationsJson -> JSON parser -> CacheLocation::FromJson unchanged (a property test),
// what the narrow reader accepts is what the parser would have answered. Anything else (older
// writers' records, escapes, another key order, unknown fields, damage) goes to the JSON parser,
// which also names what is wrong.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/meta/cache_location.h"

namespace kvchaos::meta {

// The locations of `text`; InvalidArgument starting with `where` ("cache entry 'k' in ...") when
// it is not a JSON array of locations.
Result<std::vector<CacheLocation>> ParseLocationsText(std::string_view text, const std::string& where);

// The narrow reader alone: true and *out set when `text` is byte for byte LocationsJson(*out).
// Exposed for the tests and the fuzz target that tie it to the JSON parser.
bool ReadWrittenLocations(std::string_view text, std::vector<CacheLocation>* out);

}  // namespace kvchaos::meta
