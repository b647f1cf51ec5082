// Reading a cache entry's locations: LocationsJson's own text directly, anything else through the
// JSON parser (see locations_text.h for why the two cannot disagree).
#include "core/meta/locations_text.h"

#include <charconv>

#include <nlohmann/json.hpp>

namespace kvchaos::meta {
namespace {

// A cursor over text that only ever accepts what LocationsJson writes: no whitespace, no escapes.
// Every method returns false on anything else, leaving the verdict to the JSON parser.
class WrittenReader {
 public:
  explicit WrittenReader(std::string_view text) : rest_(text) {}

  bool done() const { return rest_.empty(); }
  bool Eat(char c) {
    if (rest_.empty() || rest_.front() != c) return false;
    rest_.remove_prefix(1);
    return true;
  }

  // A string without escapes (the comparison with the rewritten text refuses what needed them).
  bool String(std::string_view* out) {
    if (!Eat('"')) return false;
    const size_t end = rest_.find_first_of("\"\\");
    if (end == std::string_view::npos || rest_[end] != '"') return false;
    *out = rest_.substr(0, end);
    rest_.remove_prefix(end + 1);
    return true;
  }
  template <typename Int>
  bool Integer(Int* out) {
    const auto [ptr, ec] = std::from_chars(rest_.data(), rest_.data() + rest_.size(), *out);
    if (ec != std::errc() || ptr == rest_.data()) return false;
    rest_.remove_prefix(static_cast<size_t>(ptr - rest_.data()));
    return true;
  }
  bool Bool(bool* out) {
    for (const bool value : {true, false}) {
      const std::string_view word = value ? "true" : "false";
      if (rest_.starts_with(word)) {
        rest_.remove_prefix(word.size());
        *out = value;
        return true;
      }
    }
    return false;
  }
  // [[count,size],...] as IovLayout::FromRuns takes it.
  bool Layout(IovLayout* out) {
    std::vector<IovRun> runs;
    if (!Eat('[')) return false;
    while (!Eat(']')) {
      if (!runs.empty() && !Eat(',')) return false;
      IovRun run;
      if (!Eat('[') || !Integer(&run.count) || !Eat(',') || !Integer(&run.size) || !Eat(']')) return false;
      runs.push_back(run);
    }
    Result<IovLayout> layout = IovLayout::FromRuns(runs, "iov_layout");
    if (!layout.ok()) return false;
    *out = std::move(*layout);
    return true;
  }

 private:
  std::string_view rest_;
};

bool ReadField(WrittenReader& in, std::string_view key, CacheLocation* loc, bool* algo_given) {
  std::string_view text;
  if (key == "checksum") return in.Integer(&loc->checksum);
  if (key == "checksum_present") return in.Bool(&loc->checksum_present);
  if (key == "inline_header_version") return in.Integer(&loc->inline_header_version);
  if (key == "iov_layout") return in.Layout(&loc->iov_layout);
  if (!in.String(&text)) return false;
  if (key == "checksum_algo") {
    *algo_given = true;
    return integrity::ChecksumAlgoFromName(text, &loc->checksum_algo);
  }
  if (key == "status") {
    if (text != "serving" && text != "writing") return false;
    loc->status = text == "serving" ? LocationStatus::kServing : LocationStatus::kWriting;
    return true;
  }
  std::string* field = key == "storage" ? &loc->storage : key == "uri" ? &loc->uri
                     : key == "write_session" ? &loc->write_session : nullptr;
  if (field == nullptr) return false;
  field->assign(text);
  return true;
}

bool ReadLocation(WrittenReader& in, CacheLocation* loc) {
  bool algo_given = false;
  if (!in.Eat('{')) return false;
  for (bool first = true; !in.Eat('}'); first = false) {
    std::string_view key;
    if ((!first && !in.Eat(',')) || !in.String(&key) || !in.Eat(':')) return false;
    if (!ReadField(in, key, loc, &algo_given)) return false;
  }
  // What FromJson makes of fields that LocationsJson writes as they are: without the presence flag
  // a checksum reads as 0 of no algorithm, with it the algorithm is named. Other values would be
  // rewritten to the same text but read back differently, so they are the parser's to judge.
  if (loc->checksum_present != algo_given) return false;
  if (!loc->checksum_present && loc->checksum != 0) return false;
  return loc->inline_header_version >= 0;
}

}  // namespace

bool ReadWrittenLocations(std::string_view text, std::vector<CacheLocation>* out) {
  std::vector<CacheLocation> locations;
  WrittenReader in(text);
  if (!in.Eat('[')) return false;
  while (!in.Eat(']')) {
    if (!locations.empty() && !in.Eat(',')) return false;
    if (!ReadLocation(in, &locations.emplace_back())) return false;
  }
  if (!in.done() || LocationsJson(locations) != text) return false;
  *out = std::move(locations);
  return true;
}

Result<std::vector<CacheLocation>> ParseLocationsText(std::string_view text, const std::string& where) {
  std::vector<CacheLocation> out;
  if (ReadWrittenLocations(text, &out)) return out;
  nlohmann::json array = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (array.is_discarded() || !array.is_array()) {
    return Status::InvalidArgument(where + ": 'locations' is not a JSON array");
  }
  for (size_t l = 0; l < array.size(); ++l) {
    Result<CacheLocation> loc = CacheLocation::FromJson(array[l], where + ".locations[" + std::to_string(l) + "]");
    if (!loc.ok()) return loc.status();
    out.push_back(std::move(*loc));
  }
  return out;
}

}  // namespace kvchaos::meta
