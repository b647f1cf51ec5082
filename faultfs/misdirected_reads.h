// Misdirected reads: a read of one file served from another file's bytes at the same offset, as
// when a stale mapping or a firmware bug sends a read to the wrong place. This file chooses the
// other file; the FUSE passthrough and the simulator's disk each list their own files and read
// the bytes. The choice is a pure function of the candidates and the call's Rng stream, so the
// same seed and the same file tree give the same source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/rng.h"
#include "faultfs/rule.h"

namespace kvchaos::faultfs {

struct FileEntry {
  std::string path;  // inside the mount, no leading '/'
  uint64_t size = 0;
};

// The file a misdirected read of `read_path` is served from: one of `files` whose path matches
// the rule's `source` glob (its `path` glob when none is given), that is not `read_path` and that
// holds bytes up to `needed_end` (the end of what the read would have returned from its own
// file, so the reader gets a whole answer of other bytes, never a short one). Drawn uniformly
// from those candidates in path order; nullopt when there is none.
std::optional<std::string> PickMisdirectSource(const Rule& rule, std::string_view read_path, uint64_t needed_end,
                                               std::vector<FileEntry> files, Rng& rng);

// Every regular file below the directory `root_fd` (any descriptor, O_PATH included), with its
// size, depth first; unreadable directories are skipped (a fault must not fail for them).
std::vector<FileEntry> ListFiles(int root_fd);

}  // namespace kvchaos::faultfs
