#include "core/common/config_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>

#include "core/common/units.h"
#include "core/common/utf8.h"
#include "core/common/yaml_document_check.h"

namespace kvchaos {
namespace {

const char* KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "empty";
    default: return "a scalar";
  }
}

// Each Convert returns "" on success or the problem ("expected an integer, got 'abc'").
std::string Convert(const YAML::Node& node, std::string* out) {
  if (!node.IsScalar()) return std::string("expected a string, got ") + KindName(node);
  *out = node.Scalar();
  return "";
}

std::string Convert(const YAML::Node& node, bool* out) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") {
      *out = true;
      return "";
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      *out = false;
      return "";
    }
    return "expected true or false, got '" + s + "'";
  }
  return std::string("expected true or false, got ") + KindName(node);
}

template <typename Int>
std::string ConvertInt(const YAML::Node& node, Int* out) {
  if (!node.IsScalar()) return std::string("expected an integer, got ") + KindName(node);
  const std::string& s = node.Scalar();
  Int value{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return "value " + s + " is out of range [" + std::to_string(std::numeric_limits<Int>::min()) + ", " +
           std::to_string(std::numeric_limits<Int>::max()) + "]";
  }
  if (ec != std::errc() || ptr != s.data() + s.size()) return "expected an integer, got '" + s + "'";
  *out = value;
  return "";
}

std::string Convert(const YAML::Node& node, int32_t* out) { return ConvertInt(node, out); }
std::string Convert(const YAML::Node& node, int64_t* out) { return ConvertInt(node, out); }
std::string Convert(const YAML::Node& node, uint32_t* out) { return ConvertInt(node, out); }
std::string Convert(const YAML::Node& node, uint64_t* out) { return ConvertInt(node, out); }

std::string Convert(const YAML::Node& node, double* out) {
  if (!node.IsScalar()) return std::string("expected a number, got ") + KindName(node);
  const std::string& s = node.Scalar();
  double value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return "expected a number, got '" + s + "'";
  *out = value;
  return "";
}

std::string Convert(const YAML::Node& node, std::vector<std::string>* out) {
  if (!node.IsSequence()) return std::string("expected a list of strings, got ") + KindName(node);
  std::vector<std::string> values;
  for (size_t i = 0; i < node.size(); ++i) {
    if (!node[i].IsScalar()) return "item " + std::to_string(i) + ": expected a string, got " + KindName(node[i]);
    values.push_back(node[i].Scalar());
  }
  *out = std::move(values);
  return "";
}

int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

}  // namespace

ConfigSection::ConfigSection(YAML::Node node, std::string path, std::shared_ptr<const std::string> file,
                             std::shared_ptr<std::vector<ConfigProblem>> problems)
    : node_(std::move(node)), path_(std::move(path)), file_(std::move(file)), problems_(std::move(problems)) {}

std::string ConfigSection::Path(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

int ConfigSection::Line(std::string_view key) const {
  if (node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.Scalar() == key) return LineOf(it->first);
    }
  }
  return node_.Mark().is_null() ? 1 : LineOf(node_);
}

void ConfigSection::Record(int line, std::string_view path, std::string_view problem) {
  problems_->push_back(
      {line, *file_ + ":" + std::to_string(line) + ": " + std::string(path) + ": " + std::string(problem)});
}

void ConfigSection::Problem(std::string_view key, std::string_view problem) { Record(Line(key), Path(key), problem); }

bool ConfigSection::Has(std::string_view key) const { return node_.IsMap() && node_[std::string(key)].IsDefined(); }

std::optional<YAML::Node> ConfigSection::Lookup(std::string_view key, bool required) {
  read_.emplace(key);
  if (node_.IsMap()) {
    YAML::Node value = node_[std::string(key)];
    if (value.IsDefined()) return value;
  }
  if (required) Record(Line(key), Path(key), "missing (required)");
  return std::nullopt;
}

template <typename T>
bool ConfigSection::Read(std::string_view key, T* out, bool required) {
  std::optional<YAML::Node> value = Lookup(key, required);
  if (!value) return false;
  const std::string problem = Convert(*value, out);
  if (!problem.empty()) {
    Record(Line(key), Path(key), problem);
    return false;
  }
  return true;
}

template bool ConfigSection::Read(std::string_view, std::string*, bool);
template bool ConfigSection::Read(std::string_view, bool*, bool);
template bool ConfigSection::Read(std::string_view, int32_t*, bool);
template bool ConfigSection::Read(std::string_view, int64_t*, bool);
template bool ConfigSection::Read(std::string_view, uint32_t*, bool);
template bool ConfigSection::Read(std::string_view, uint64_t*, bool);
template bool ConfigSection::Read(std::string_view, double*, bool);
template bool ConfigSection::Read(std::string_view, std::vector<std::string>*, bool);

bool ConfigSection::RequiredDuration(std::string_view key, Duration* out) {
  std::string text;
  if (!Required(key, &text)) return false;
  Result<Duration> d = ParseDuration(text);
  if (!d.ok()) {
    Problem(key, d.status().message());
    return false;
  }
  *out = *d;
  return true;
}

bool ConfigSection::OptionalDuration(std::string_view key, Duration* out) {
  if (!Has(key)) {
    read_.emplace(key);
    return false;
  }
  return RequiredDuration(key, out);
}

bool ConfigSection::OptionalMillis(std::string_view key, int64_t* ms) {
  int64_t value = 0;
  if (!Optional(key, &value)) return false;
  const int64_t bound = ToMillis(kMaxDuration);
  if (value > bound || value < -bound) {
    Problem(key, std::to_string(value) + " ms is out of range (at most " + std::to_string(bound) + " ms, 100 years)");
    return false;
  }
  *ms = value;
  return true;
}

bool ConfigSection::OptionalSeconds(std::string_view key, double* seconds) {
  double value = 0;
  if (!Optional(key, &value)) return false;
  const double bound = std::chrono::duration<double>(kMaxDuration).count();
  if (!std::isfinite(value) || value > bound || value < -bound) {
    Problem(key, node_[std::string(key)].Scalar() + " s is out of range (at most " + std::to_string(static_cast<int64_t>(bound)) +
                     " s, 100 years)");
    return false;
  }
  *seconds = value;
  return true;
}

bool ConfigSection::OptionalByteSize(std::string_view key, uint64_t* out) {
  std::string text;
  if (!Optional(key, &text)) return false;
  Result<uint64_t> size = ParseByteSize(text);
  if (!size.ok()) {
    Problem(key, size.status().message());
    return false;
  }
  *out = *size;
  return true;
}

std::optional<ConfigSection> ConfigSection::Section(std::string_view key, bool required) {
  std::optional<YAML::Node> value = Lookup(key, required);
  if (!value) return std::nullopt;
  if (value->IsNull()) return ConfigSection(YAML::Node(YAML::NodeType::Map), Path(key), file_, problems_);
  if (!value->IsMap()) {
    Problem(key, std::string("expected a mapping, got ") + KindName(*value));
    return std::nullopt;
  }
  return ConfigSection(*value, Path(key), file_, problems_);
}

std::vector<ConfigSection> ConfigSection::SectionList(std::string_view key, bool required) {
  std::vector<ConfigSection> items;
  std::optional<YAML::Node> value = Lookup(key, required);
  if (!value) return items;
  if (!value->IsSequence()) {
    Problem(key, std::string("expected a list, got ") + KindName(*value));
    return items;
  }
  for (size_t i = 0; i < value->size(); ++i) {
    const std::string item_path = Path(key) + "[" + std::to_string(i) + "]";
    YAML::Node item = (*value)[i];
    if (!item.IsMap()) {
      Record(LineOf(item), item_path, std::string("expected a mapping, got ") + KindName(item));
      continue;
    }
    items.push_back(ConfigSection(item, item_path, file_, problems_));
  }
  return items;
}

std::vector<std::string> ConfigSection::Keys() const {
  std::vector<std::string> keys;
  if (!node_.IsMap()) return keys;
  for (auto it = node_.begin(); it != node_.end(); ++it) keys.push_back(it->first.Scalar());
  return keys;
}

void ConfigSection::Done(const std::vector<std::string>& also_known) {
  if (!node_.IsMap()) return;
  std::vector<std::string> known(read_.begin(), read_.end());
  known.insert(known.end(), also_known.begin(), also_known.end());
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string& key = it->first.Scalar();
    if (read_.count(key) == 0 && std::find(also_known.begin(), also_known.end(), key) == also_known.end()) {
      const std::string near = ClosestMatch(key, known);
      Record(LineOf(it->first), Path(key), near.empty() ? "unknown key" : "unknown key (did you mean " + near + "?)");
    }
  }
}

size_t EditDistance(std::string_view a, std::string_view b) {
  // One row of the table; words here are config keys, a few dozen letters at most.
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 3;
  for (const std::string& candidate : candidates) {
    const size_t d = EditDistance(word, candidate);
    if (d < best_distance && 2 * d < word.size()) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

Result<ConfigFile> ConfigFile::Parse(std::string_view text, std::string name) {
  ConfigFile file;
  file.file_ = std::make_shared<const std::string>(std::move(name));
  file.problems_ = std::make_shared<std::vector<ConfigProblem>>();
  try {
    file.root_ = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidConfig(*file.file_ + ":" + std::to_string(e.mark.line + 1) + ":" +
                                 std::to_string(e.mark.column + 1) + ": " + EscapeInvalidUtf8(e.msg));
  }
  std::vector<YamlProblem> problems = CheckYamlDocument(file.root_);
  if (!problems.empty()) {
    std::string message;
    for (const YamlProblem& p : problems) {
      message += (message.empty() ? "" : "\n") + *file.file_ + ":" + std::to_string(std::max(p.line, 1)) + ": " +
                 (p.path.empty() ? "(top level)" : p.path) + ": " + p.problem;
    }
    return Status::InvalidConfig(message);
  }
  return file;
}

Result<ConfigFile> ConfigFile::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kInvalidConfig, "cannot open config file '" + path + "'", errno);
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Status(StatusCode::kInvalidConfig, "cannot read config file '" + path + "'", errno);
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxBytes) {
    return Status::InvalidConfig(path + ": larger than " + FormatBytes(kMaxBytes) + ", too large for a config file");
  }
  return Parse(text, path);
}

ConfigSection ConfigFile::Root() {
  if (root_.IsNull() || !root_.IsDefined()) {
    return ConfigSection(YAML::Node(YAML::NodeType::Map), "", file_, problems_);
  }
  ConfigSection root(root_, "", file_, problems_);
  if (!root_.IsMap()) {
    problems_->push_back({LineOf(root_), *file_ + ":" + std::to_string(LineOf(root_)) +
                                             ": (top level): expected a mapping, got " + KindName(root_)});
  }
  return root;
}

Status ConfigFile::Finish() const {
  if (!problems_ || problems_->empty()) return Status::Ok();
  // In the order a reader of the file meets them; problems of one line keep the order found.
  std::vector<ConfigProblem> sorted = *problems_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const ConfigProblem& a, const ConfigProblem& b) { return a.line < b.line; });
  std::string message;
  for (const ConfigProblem& p : sorted) {
    if (!message.empty()) message += "\n";
    message += p.text;
  }
  return Status::InvalidConfig(message);
}

}  // namespace kvchaos
