// Base64 (RFC 4648, standard alphabet, '=' padding): how etcd's v3 JSON gateway carries keys and
// values (protobuf `bytes` fields), so any byte string travels through JSON unchanged.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvchaos {

std::string Base64Encode(std::string_view bytes);

// The bytes `text` encodes; nullopt when it is not canonical padded base64 (a character outside
// the alphabet, a length that is not a multiple of 4, padding anywhere but the end, or pad bits
// that are not zero).
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace kvchaos
