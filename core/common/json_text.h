// JSON text in and out, safe on hostile input.
//
// DumpJson is the one way this project writes JSON: nlohmann's dump() throws type_error.316 on a
// string that is not UTF-8 (a file name, an argument, a message quoting input), which aborts a
// process that does not expect it; here such bytes come out as U+FFFD instead.
//
// ParseJsonStrict reads a JSON text from an untrusted source (a control command, a request) and
// refuses what nlohmann would accept silently or answer with an error quoting the bad bytes:
// invalid UTF-8 (named by offset), duplicate keys (named by path, "rules[1].id"; nlohmann keeps
// the last), and syntax errors (their message escaped).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace kvchaos {

// `j` as JSON text (compact when indent < 0); never throws on strings that are not UTF-8.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

// Appends `s` as a JSON string, the bytes DumpJson(nlohmann::json(s)) gives, for writers that
// produce a hot record's text directly instead of building a json value to dump.
void AppendJsonString(std::string* out, std::string_view s);

// Parses `text`; InvalidArgument starting with `what` ("request: duplicate key 'rule.id'").
Result<nlohmann::json> ParseJsonStrict(std::string_view text, std::string_view what);

}  // namespace kvchaos
