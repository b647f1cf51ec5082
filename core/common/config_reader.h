// Config reader on yaml-cpp that explains every problem as `file:line: key: problem`.
//
//   auto file = ConfigFile::Load("store.yaml");           // syntax errors: file:line:col
//   ConfigSection root = file->Root();
//   root.Required("storage_backends", &backends);          // missing / ill-typed → recorded
//   root.Optional("timeout_ms", &timeout_ms);              // absent → *out keeps its default
//   if (timeout_ms < 0) root.Problem("timeout_ms", "must be >= 0");
//   root.Done();                                           // keys never read → "unknown key"
//   Status s = file->Finish();                             // InvalidConfig listing every problem
//
// Readers collect all problems instead of stopping at the first, so one run shows them all, in
// the order of their lines in the file; an unknown key names the known key it is closest to
// ("did you mean timeout_ms?"). Nothing is applied by the caller unless Finish() is OK. Documents with duplicate keys, invalid
// UTF-8 or aliases expanding past a node budget are refused by Load/Parse before any reading.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"

namespace kvchaos {

// One recorded problem: its line in the file and the full text (`file:line: key: problem`).
struct ConfigProblem {
  int line = 0;
  std::string text;
};

class ConfigSection {
 public:
  // Reads a scalar (bool, integers, double, std::string) or a list of strings.
  template <typename T>
  bool Required(std::string_view key, T* out) {
    return Read(key, out, /*required=*/true);
  }
  template <typename T>
  bool Optional(std::string_view key, T* out) {
    return Read(key, out, /*required=*/false);
  }
  // Durations accept "250ms", "10s", "2m" or a bare number of milliseconds, up to kMaxDuration.
  bool RequiredDuration(std::string_view key, Duration* out);
  bool OptionalDuration(std::string_view key, Duration* out);
  // A duration kept as an integer count of milliseconds (`timeout_ms: 30`) or as a number of
  // seconds (`health_check_interval_s: 0.5`): refused past ±kMaxDuration (or not finite), since
  // the caller turns it into a Duration, which would wrap.
  bool OptionalMillis(std::string_view key, int64_t* ms);
  bool OptionalSeconds(std::string_view key, double* seconds);
  // Byte sizes accept "4096", "4KiB", "4MiB", up to kMaxByteSize.
  bool OptionalByteSize(std::string_view key, uint64_t* out);

  bool Has(std::string_view key) const;
  // A nested mapping; nullopt (and a recorded problem when required) if absent or not a mapping.
  std::optional<ConfigSection> Section(std::string_view key, bool required = false);
  // A sequence of mappings (`- {...}` items); each item's path is `key[i]`.
  std::vector<ConfigSection> SectionList(std::string_view key, bool required = false);
  // Names of all keys present, in file order.
  std::vector<std::string> Keys() const;
  // Records a validation problem about `key` at its line (or the section's line if absent).
  void Problem(std::string_view key, std::string_view problem);
  // Records every key present but never read (or listed in `also_known`) as unknown.
  void Done(const std::vector<std::string>& also_known = {});

  // Full dotted path of `key` in this section ("store_health.health_window_size").
  std::string Path(std::string_view key) const;
  // 1-based line of `key` (of the section itself when the key is absent).
  int Line(std::string_view key) const;
  const YAML::Node& node() const { return node_; }

 private:
  friend class ConfigFile;
  ConfigSection(YAML::Node node, std::string path, std::shared_ptr<const std::string> file,
                std::shared_ptr<std::vector<ConfigProblem>> problems);

  template <typename T>
  bool Read(std::string_view key, T* out, bool required);
  // Finds `key`, marks it read; records "missing" when required and absent.
  std::optional<YAML::Node> Lookup(std::string_view key, bool required);
  void Record(int line, std::string_view path, std::string_view problem);

  YAML::Node node_;
  std::string path_;
  std::shared_ptr<const std::string> file_;
  std::shared_ptr<std::vector<ConfigProblem>> problems_;
  std::set<std::string, std::less<>> read_;
};

class ConfigFile {
 public:
  // Config files are hand-written; anything larger than this is a wrong path (or /dev/zero).
  static constexpr size_t kMaxBytes = 4 << 20;

  static Result<ConfigFile> Load(const std::string& path);
  // Parses text; `name` stands for the file name in messages. The document is checked first
  // (core/common/yaml_document_check.h: alias expansion, depth, duplicate keys, UTF-8), so no
  // reader ever sees a document that could blow up or hide a key.
  static Result<ConfigFile> Parse(std::string_view text, std::string name);

  // The top-level mapping. An empty document reads as an empty mapping.
  ConfigSection Root();
  // OK, or InvalidConfig whose message lists every recorded problem, one per line, in line order.
  Status Finish() const;
  const std::string& name() const { return *file_; }
  ConfigFile() = default;

 private:
  YAML::Node root_;
  std::shared_ptr<const std::string> file_;
  std::shared_ptr<std::vector<ConfigProblem>> problems_;
};

// Levenshtein distance (insertions, deletions, substitutions) of two short words.
size_t EditDistance(std::string_view a, std::string_view b);
// The candidate closest to `word` by edit distance, if it is close enough to be a likely typo
// (at most 2 edits, and fewer than half of the word's letters); "" otherwise.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace kvchaos
