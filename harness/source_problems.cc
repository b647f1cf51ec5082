// Rendering of collected input problems (see source_problems.h).
#include "harness/source_problems.h"

#include <algorithm>

namespace kvchaos::harness {

std::string SourceProblem::ToString(const std::string& file) const {
  return file + ":" + std::to_string(line) + ": " + (path.empty() ? "(top level)" : path) + ": " + problem;
}

void SourceProblems::Add(int line, std::string path, std::string problem) {
  if (line < 1) line = 1;
  SourceProblem p{line, std::move(path), std::move(problem)};
  if (std::find(problems_.begin(), problems_.end(), p) == problems_.end()) problems_.push_back(std::move(p));
}

Status SourceProblems::ToStatus() const {
  if (problems_.empty()) return Status::Ok();
  std::vector<SourceProblem> sorted = problems_;
  // Stable: problems on one line keep the order they were found in.
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const SourceProblem& a, const SourceProblem& b) { return a.line < b.line; });
  std::string message;
  for (const SourceProblem& p : sorted) {
    if (!message.empty()) message += "\n";
    message += p.ToString(file_);
  }
  return Status::InvalidConfig(std::move(message));
}

}  // namespace kvchaos::harness
