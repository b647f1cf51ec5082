// IovLayout: run-length encoding of a block's IOV sizes, its checks and its JSON form.
#include "core/meta/iov_layout.h"

#include "core/common/json_text.h"

namespace kvchaos::meta {
namespace {

Status Bad(std::string_view path, std::string_view problem) {
  return Status::InvalidArgument(std::string(path) + ": " + std::string(problem));
}

// Appends `count` IOVs of `size` to `runs`, merging with the last run of the same size.
void Append(std::vector<IovRun>* runs, uint64_t count, uint64_t size) {
  if (!runs->empty() && runs->back().size == size) {
    runs->back().count += count;
  } else {
    runs->push_back({count, size});
  }
}

std::string FormatRuns(const std::vector<IovRun>& runs) {
  std::string out;
  for (const IovRun& run : runs) {
    if (!out.empty()) out += " + ";
    out += std::to_string(run.count) + " x " + std::to_string(run.size);
  }
  return out + " bytes";
}

}  // namespace

Result<IovLayout> IovLayout::FromRuns(std::span<const IovRun> runs, std::string_view path) {
  if (runs.empty()) return Bad(path, "no IOVs (omit the layout when it is unknown)");
  IovLayout out;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string where = std::string(path) + "[" + std::to_string(r) + "]";
    const IovRun& run = runs[r];
    if (run.count == 0) return Bad(where, "count 0 (a run holds at least one IOV)");
    if (run.size == 0) return Bad(where, "IOV size 0");
    // Checked before multiplying, so a count near 2^64 cannot wrap into a small total.
    if (run.count > kMaxIovs - out.iov_count_) {
      return Bad(where, "more than " + std::to_string(kMaxIovs) + " IOVs in one block");
    }
    if (run.size > (UINT64_MAX - out.total_bytes_) / run.count) {
      return Bad(where, std::to_string(run.count) + " x " + std::to_string(run.size) +
                            " bytes overflows the block length");
    }
    out.iov_count_ += run.count;
    out.total_bytes_ += run.count * run.size;
    Append(&out.runs_, run.count, run.size);
  }
  return out;
}

Result<IovLayout> IovLayout::FromSizes(std::span<const uint64_t> sizes) {
  if (sizes.size() > kMaxIovs) {
    return Bad("IOV sizes", std::to_string(sizes.size()) + " IOVs, more than " + std::to_string(kMaxIovs));
  }
  std::vector<IovRun> runs;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return Bad("IOV sizes[" + std::to_string(i) + "]", "size 0");
    Append(&runs, 1, sizes[i]);
  }
  return FromRuns(runs, "IOV sizes");
}

Result<IovLayout> IovLayout::FromJson(const nlohmann::json& j, std::string_view path) {
  if (!j.is_array()) return Bad(path, std::string("expected an array of [count, size] pairs, got ") + j.type_name());
  std::vector<IovRun> runs;
  for (size_t r = 0; r < j.size(); ++r) {
    const std::string where = std::string(path) + "[" + std::to_string(r) + "]";
    const nlohmann::json& pair = j[r];
    if (!pair.is_array() || pair.size() != 2) return Bad(where, "expected a [count, size] pair, got " + DumpJson(pair));
    for (size_t k = 0; k < 2; ++k) {
      if (!pair[k].is_number_unsigned()) {
        return Bad(where + "[" + std::to_string(k) + "]", std::string("expected a non-negative integer ") +
                                                              (k == 0 ? "count" : "size") + ", got " + DumpJson(pair[k]));
      }
    }
    runs.push_back({pair[0].get<uint64_t>(), pair[1].get<uint64_t>()});
  }
  return FromRuns(runs, path);
}

std::vector<uint64_t> IovLayout::Sizes() const {
  std::vector<uint64_t> out;
  out.reserve(iov_count_);
  for (const IovRun& run : runs_) out.insert(out.end(), run.count, run.size);
  return out;
}

bool IovLayout::Matches(std::span<const uint64_t> sizes) const {
  if (sizes.size() != iov_count_) return false;
  size_t i = 0;
  for (const IovRun& run : runs_) {
    for (uint64_t c = 0; c < run.count; ++c, ++i) {
      if (sizes[i] != run.size) return false;
    }
  }
  return true;
}

nlohmann::json IovLayout::ToJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (const IovRun& run : runs_) out.push_back(nlohmann::json::array({run.count, run.size}));
  return out;
}

void IovLayout::AppendJson(std::string* out) const {
  out->push_back('[');
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (i > 0) out->push_back(',');
    *out += '[' + std::to_string(runs_[i].count) + ',' + std::to_string(runs_[i].size) + ']';
  }
  out->push_back(']');
}

std::string IovLayout::ToString() const { return known() ? FormatRuns(runs_) : "unknown"; }

std::string DescribeIovSizes(std::span<const uint64_t> sizes) {
  if (sizes.empty()) return "no IOVs";
  std::vector<IovRun> runs;
  for (uint64_t size : sizes) Append(&runs, 1, size);
  return FormatRuns(runs);
}

}  // namespace kvchaos::meta
