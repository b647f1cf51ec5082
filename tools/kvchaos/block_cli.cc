// Keys files and block lines of the block commands (see block_cli.h).
#include "tools/kvchaos/block_cli.h"

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "core/meta/cache_manager.h"
#include "core/store/block_id.h"

namespace kvchaos::cli {

Result<std::vector<std::string>> ReadKeysFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IoError("cannot open keys file '" + path + "'", errno);
  std::vector<std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    keys.push_back(line.substr(start));
  }
  return keys;
}

std::string MismatchLine(const client::ChecksumMismatchEvent& e) {
  return "MISMATCH key=" + e.key + " storage=" + e.storage + " location=" + e.location +
         " algo=" + std::string(integrity::ChecksumAlgoName(e.algo)) + " expected=" + std::to_string(e.expected) +
         " actual=" + std::to_string(e.actual);
}

std::string BlockFileOf(store::PosixStore& store, const std::string& key) {
  Result<store::BlockId> id = store::BlockId::FromHex(meta::CacheManager::BlockIdHexForKey(key));
  if (!id.ok()) return "";
  for (int backend : store.backends().CandidateOrder(store::BlockIdHasher{}(*id))) {
    std::string path = store::BlockPath(store.backends().path(backend), *id, store.config().data_dir_shard_bytes);
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return path;
  }
  return "";
}

}  // namespace kvchaos::cli
