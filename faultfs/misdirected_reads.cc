// Choosing where a misdirected read goes; see misdirected_reads.h.
#include "faultfs/misdirected_reads.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "faultfs/glob.h"

namespace kvchaos::faultfs {

std::optional<std::string> PickMisdirectSource(const Rule& rule, std::string_view read_path, uint64_t needed_end,
                                               std::vector<FileEntry> files, Rng& rng) {
  const std::string& glob = rule.source.empty() ? rule.path : rule.source;
  std::erase_if(files, [&](const FileEntry& f) {
    return f.path == read_path || f.size < needed_end || !GlobMatch(glob, f.path);
  });
  if (files.empty()) return std::nullopt;
  // Path order, not listing order: the draw must not depend on how a directory happens to list.
  std::sort(files.begin(), files.end(), [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
  return files[rng.Uniform(files.size())].path;
}

namespace {

void ListInto(int dir_fd, const std::string& prefix, std::vector<FileEntry>& out, int depth) {
  if (depth > 64) return;  // a bound for pathological trees; block stores are two levels deep
  const int fd = openat(dir_fd, prefix.empty() ? "." : prefix.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    close(fd);
    return;
  }
  std::vector<std::string> subdirs;
  while (dirent* e = readdir(dir)) {
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    const std::string path = prefix.empty() ? std::string(name) : prefix + "/" + std::string(name);
    if (S_ISDIR(st.st_mode)) {
      subdirs.push_back(path);
    } else if (S_ISREG(st.st_mode)) {
      out.push_back({path, static_cast<uint64_t>(st.st_size)});
    }
  }
  closedir(dir);
  for (const std::string& sub : subdirs) ListInto(dir_fd, sub, out, depth + 1);
}

}  // namespace

std::vector<FileEntry> ListFiles(int root_fd) {
  std::vector<FileEntry> out;
  ListInto(root_fd, "", out, 0);
  return out;
}

}  // namespace kvchaos::faultfs
