// Problems found in an input file, each at a line and a key path ("faults[2].node"), collected so
// one run shows them all. ToStatus() renders them as `file:line: key: problem`, the same shape as
// core/common/config_reader.h, sorted by line so they read top to bottom.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/common/status.h"

namespace kvchaos::harness {

struct SourceProblem {
  int line = 0;          // 1-based
  std::string path;      // dotted key path; "(top level)" for the document itself
  std::string problem;

  std::string ToString(const std::string& file) const;
  friend bool operator==(const SourceProblem&, const SourceProblem&) = default;
};

class SourceProblems {
 public:
  explicit SourceProblems(std::string file) : file_(std::move(file)) {}

  void Add(int line, std::string path, std::string problem);
  bool empty() const { return problems_.empty(); }
  const std::vector<SourceProblem>& problems() const { return problems_; }
  const std::string& file() const { return file_; }

  // OK when empty; otherwise InvalidConfig listing every problem once, ordered by line.
  Status ToStatus() const;

 private:
  std::string file_;
  std::vector<SourceProblem> problems_;
};

}  // namespace kvchaos::harness
