// Safe JSON dump and strict parse; see json_text.h.
#include "core/common/json_text.h"

#include <set>
#include <vector>

#include "core/common/utf8.h"

namespace kvchaos {
namespace {

// Follows the parser's events to know the path of every key, and remembers the first key given
// twice in one object.
class DuplicateKeyFinder {
 public:
  bool OnEvent(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        frames_.push_back(Frame{event == Event::array_start, 0, {}, {}});
        break;
      case Event::key: {
        Frame& top = frames_.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second && duplicate_.empty()) duplicate_ = Path();
        break;
      }
      case Event::object_end:
      case Event::array_end:
        frames_.pop_back();
        ElementDone();
        break;
      case Event::value:
        ElementDone();
        break;
    }
    return true;  // keep everything: the caller refuses the whole text on a duplicate
  }
  const std::string& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool array = false;
    size_t index = 0;      // of the element being parsed, in an array
    std::string key;       // being parsed, in an object
    std::set<std::string> keys;
  };

  void ElementDone() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::string Path() const {
    std::string path;
    for (const Frame& f : frames_) {
      if (f.array) {
        path += "[" + std::to_string(f.index) + "]";
      } else {
        path += (path.empty() ? "" : ".") + f.key;
      }
    }
    return path;
  }

  std::vector<Frame> frames_;
  std::string duplicate_;
};

}  // namespace

std::string DumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

void AppendJsonString(std::string* out, std::string_view s) {
  for (const char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x80 || c == '"' || c == '\\') {
      // Escapes, non-ASCII and invalid UTF-8: nlohmann's own rules, so the bytes stay DumpJson's.
      *out += DumpJson(nlohmann::json(std::string(s)));
      return;
    }
  }
  out->push_back('"');
  out->append(s);
  out->push_back('"');
}

Result<nlohmann::json> ParseJsonStrict(std::string_view text, std::string_view what) {
  const std::string where(what);
  if (std::string problem = Utf8Problem(text); !problem.empty()) {
    return Status::InvalidArgument(where + ": the text " + problem);
  }
  DuplicateKeyFinder finder;
  nlohmann::json::parser_callback_t callback = [&finder](int, nlohmann::json::parse_event_t event,
                                                         nlohmann::json& parsed) {
    return finder.OnEvent(event, parsed);
  };
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::exception& e) {
    // The message quotes the bytes read last, which may end inside a multi-byte character.
    return Status::InvalidArgument(where + " is not JSON: " + EscapeInvalidUtf8(e.what()));
  }
  if (!finder.duplicate().empty()) {
    return Status::InvalidArgument(where + ": duplicate key '" + EscapeInvalidUtf8(finder.duplicate()) + "'");
  }
  return value;
}

}  // namespace kvchaos
