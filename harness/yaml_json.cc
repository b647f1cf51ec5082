// YAML → JSON conversion with source lines (see yaml_json.h).
#include "harness/yaml_json.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <regex>

#include "core/common/yaml_document_check.h"

namespace kvchaos::harness {
namespace {

int Line(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }

// Parent of a rendered path: "a.b[2]" → "a.b", "a.b" → "a", "a" → "".
std::string Parent(const std::string& path) {
  const size_t cut = path.find_last_of(".[");
  return cut == std::string::npos ? std::string() : path.substr(0, cut);
}

bool ParseInteger(const std::string& text, nlohmann::json* out) {
  static const std::regex kDecimal("^[-+]?[0-9]+$");
  static const std::regex kHex("^0x[0-9a-fA-F]+$");
  static const std::regex kOctal("^0o[0-7]+$");
  int base = 10;
  std::string digits = text;
  if (std::regex_match(text, kHex)) {
    base = 16;
    digits = text.substr(2);
  } else if (std::regex_match(text, kOctal)) {
    base = 8;
    digits = text.substr(2);
  } else if (!std::regex_match(text, kDecimal)) {
    return false;
  }
  if (!digits.empty() && digits[0] == '+') digits.erase(0, 1);
  const char* begin = digits.data();
  const char* end = digits.data() + digits.size();
  int64_t as_signed = 0;
  if (auto [ptr, ec] = std::from_chars(begin, end, as_signed, base); ec == std::errc() && ptr == end) {
    *out = as_signed;
    return true;
  }
  uint64_t as_unsigned = 0;
  if (auto [ptr, ec] = std::from_chars(begin, end, as_unsigned, base); ec == std::errc() && ptr == end) {
    *out = as_unsigned;
    return true;
  }
  *out = nullptr;  // matched the integer syntax but does not fit 64 bits: the caller reports it
  return true;
}

bool ParseFloat(const std::string& text, nlohmann::json* out) {
  static const std::regex kFloat("^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$");
  static const std::regex kSpecial("^[-+]?\\.(inf|Inf|INF)$|^\\.(nan|NaN|NAN)$");
  if (std::regex_match(text, kSpecial)) {
    *out = nullptr;
    return true;
  }
  if (!std::regex_match(text, kFloat)) return false;
  errno = 0;
  const double value = std::strtod(text.c_str(), nullptr);
  *out = (errno == ERANGE || !std::isfinite(value)) ? nlohmann::json(nullptr) : nlohmann::json(value);
  return true;
}

class Converter {
 public:
  Converter(YamlJson* doc, SourceProblems* problems) : doc_(doc), problems_(problems) {}

  // `node` has passed CheckYamlDocument: bounded, no duplicate or non-scalar keys, UTF-8.
  nlohmann::json Convert(const YAML::Node& node, const KeyPath& path, int key_line) {
    const std::string where = path.ToString();
    doc_->lines[where] = SourceLines{key_line, Line(node)};
    switch (node.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return nullptr;
      case YAML::NodeType::Scalar:
        return Scalar(node, where);
      case YAML::NodeType::Sequence: {
        nlohmann::json array = nlohmann::json::array();
        for (size_t i = 0; i < node.size(); ++i) {
          array.push_back(Convert(node[i], path.Index(i), Line(node[i])));
        }
        return array;
      }
      case YAML::NodeType::Map: {
        nlohmann::json object = nlohmann::json::object();
        for (auto it = node.begin(); it != node.end(); ++it) {
          const std::string key = it->first.Scalar();
          object[key] = Convert(it->second, path.Key(key), Line(it->first));
        }
        return object;
      }
    }
    return nullptr;
  }

 private:
  nlohmann::json Scalar(const YAML::Node& node, const std::string& where) {
    const std::string& text = node.Scalar();
    const std::string& tag = node.Tag();
    if (tag == "!" || tag == "tag:yaml.org,2002:str") return text;  // quoted or explicitly a string
    if (tag != "?" && !tag.empty()) {
      problems_->Add(Line(node), where, "unsupported YAML tag '" + tag + "'");
      return nullptr;
    }
    if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
    nlohmann::json number;
    if (ParseInteger(text, &number)) {
      if (number.is_null()) problems_->Add(Line(node), where, "integer " + text + " does not fit in 64 bits");
      return number;
    }
    if (ParseFloat(text, &number)) {
      if (number.is_null()) problems_->Add(Line(node), where, "number " + text + " is not finite");
      return number;
    }
    return text;
  }

  YamlJson* doc_;
  SourceProblems* problems_;
};

}  // namespace

KeyPath KeyPath::Key(const std::string& key) const {
  KeyPath next;
  next.text_ = text_.empty() ? key : text_ + "." + key;
  return next;
}

KeyPath KeyPath::Index(size_t index) const {
  KeyPath next;
  next.text_ = text_ + "[" + std::to_string(index) + "]";
  return next;
}

int YamlJson::KeyLine(const std::string& path) const {
  for (std::string p = path;; p = Parent(p)) {
    if (auto it = lines.find(p); it != lines.end()) return it->second.key_line;
    if (p.empty()) return 1;
  }
}

int YamlJson::ValueLine(const std::string& path) const {
  for (std::string p = path;; p = Parent(p)) {
    if (auto it = lines.find(p); it != lines.end()) return it->second.value_line;
    if (p.empty()) return 1;
  }
}

YamlJson YamlToJson(const YAML::Node& root, SourceProblems* problems) {
  YamlJson doc;
  std::vector<YamlProblem> found = CheckYamlDocument(root);
  for (YamlProblem& p : found) problems->Add(p.line, std::move(p.path), std::move(p.problem));
  if (!found.empty()) return doc;  // converting could expand an alias bomb or hide a key
  Converter converter(&doc, problems);
  doc.value = converter.Convert(root, KeyPath(), Line(root));
  return doc;
}

}  // namespace kvchaos::harness
