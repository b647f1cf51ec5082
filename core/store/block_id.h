// BlockId, its routing hash and its place on disk. A block id is 16 raw bytes; upstream peers name
// its file by the 32 lowercase hex characters and route it by GCC libstdc++'s
// std::hash<std::string_view> over those bytes (MurmurHash64A-style _Hash_bytes, seed 0xc70f6907).
// The hash is written out here so that kvchaos agrees with upstream whatever the compiler, and the
// layout `<backend>/<3 hex>/<32 hex>` (+ ".tmp" while being written, in the same directory so the
// commit rename never crosses a mount) lets kvchaos read and write caches laid out by upstream.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace kvchaos::store {

struct BlockId {
  std::array<uint8_t, 16> bytes{};

  // 32 lowercase hex characters.
  std::string Hex() const;
  // Parses 32 hex characters (either case); InvalidArgument names the bad input.
  static Result<BlockId> FromHex(std::string_view hex);

  friend bool operator==(const BlockId&, const BlockId&) = default;
  friend auto operator<=>(const BlockId&, const BlockId&) = default;
};

// libstdc++'s _Hash_bytes (MurmurHash64A variant) over `len` bytes with `seed`.
uint64_t HashBytes(const void* data, size_t len, uint64_t seed);

// The routing hash of a block: HashBytes(id, 16, 0xc70f6907), the value of upstream's
// std::hash<std::string_view> on GCC.
struct BlockIdHasher {
  static constexpr uint64_t kSeed = 0xc70f6907ULL;
  uint64_t operator()(const BlockId& id) const { return HashBytes(id.bytes.data(), id.bytes.size(), kSeed); }
};

// Upstream's directory layout (data_dir_shard_bytes = W, 0..5): a block file sits in the shard
// directory named by the first W hex characters of its name (16^W directories, all created at
// setup), or in `data/` when W = 0 (one flat directory). Default 3: `<backend>/<3 hex>/<32 hex>`.
inline constexpr int kDefaultShardWidth = 3;
inline constexpr int kMaxShardWidth = 5;
// The shard directory name of a block (or probe) file named `hex` (at least `shard_width` chars).
std::string ShardDirName(std::string_view hex, int shard_width);
// Every shard directory name of the layout, in upstream's order ("000" .. "fff"; {"data"} for 0).
std::vector<std::string> ShardDirNames(int shard_width);

// Paths of a block under one backend root (without a trailing '/').
std::string BlockDir(std::string_view backend, const BlockId& id,
                     int shard_width = kDefaultShardWidth);  // <backend>/<shard>
std::string BlockPath(std::string_view backend, const BlockId& id,
                      int shard_width = kDefaultShardWidth);  // <backend>/<shard>/<32 hex>
std::string BlockTmpPath(std::string_view backend, const BlockId& id,
                         int shard_width = kDefaultShardWidth);  // BlockPath + ".tmp"

}  // namespace kvchaos::store

template <>
struct std::hash<kvchaos::store::BlockId> {
  size_t operator()(const kvchaos::store::BlockId& id) const { return kvchaos::store::BlockIdHasher{}(id); }
};
