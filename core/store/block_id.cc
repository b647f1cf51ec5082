// BlockId hex form, the upstream-compatible routing hash and the on-disk paths of a block.
#include "core/store/block_id.h"

#include <cstring>

namespace kvchaos::store {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

uint64_t ShiftMix(uint64_t v) { return v ^ (v >> 47); }

uint64_t LoadLittleEndian(const unsigned char* p, size_t n) {
  uint64_t result = 0;
  for (size_t i = n; i > 0; --i) result = (result << 8) | p[i - 1];
  return result;
}

}  // namespace

std::string BlockId::Hex() const {
  std::string out(32, '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = kHexDigits[bytes[i] >> 4];
    out[2 * i + 1] = kHexDigits[bytes[i] & 0xf];
  }
  return out;
}

Result<BlockId> BlockId::FromHex(std::string_view hex) {
  if (hex.size() != 32) {
    return Status::InvalidArgument("block id '" + std::string(hex) + "': want 32 hex characters, got " +
                                   std::to_string(hex.size()));
  }
  BlockId id;
  for (size_t i = 0; i < 16; ++i) {
    const int hi = HexValue(hex[2 * i]);
    const int lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return Status::InvalidArgument("block id '" + std::string(hex) + "': not a hex character at offset " +
                                     std::to_string(hi < 0 ? 2 * i : 2 * i + 1));
    }
    id.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return id;
}

// libstdc++ _Hash_bytes for 64-bit size_t (libstdc++-v3/libsupc++/hash_bytes.cc), little-endian
// word loads: the tail (len % 8 bytes) is folded in before the final mix.
uint64_t HashBytes(const void* data, size_t len, uint64_t seed) {
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ULL;
  const auto* buf = static_cast<const unsigned char*>(data);
  const size_t aligned_len = len & ~size_t{7};
  uint64_t hash = seed ^ (len * kMul);
  for (size_t i = 0; i < aligned_len; i += 8) {
    const uint64_t data_word = ShiftMix(LoadLittleEndian(buf + i, 8) * kMul) * kMul;
    hash ^= data_word;
    hash *= kMul;
  }
  if ((len & 7) != 0) {
    hash ^= LoadLittleEndian(buf + aligned_len, len & 7);
    hash *= kMul;
  }
  hash = ShiftMix(hash) * kMul;
  hash = ShiftMix(hash);
  return hash;
}

std::string ShardDirName(std::string_view hex, int shard_width) {
  if (shard_width == 0) return "data";
  return std::string(hex.substr(0, static_cast<size_t>(shard_width)));
}

std::vector<std::string> ShardDirNames(int shard_width) {
  if (shard_width == 0) return {"data"};
  static constexpr char kDigits[] = "0123456789abcdef";
  const size_t count = size_t{1} << (4 * shard_width);
  std::vector<std::string> names;
  names.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    std::string name(static_cast<size_t>(shard_width), '0');
    for (size_t v = i, at = name.size(); at-- > 0; v >>= 4) name[at] = kDigits[v & 15];
    names.push_back(std::move(name));
  }
  return names;
}

std::string BlockDir(std::string_view backend, const BlockId& id, int shard_width) {
  std::string dir(backend);
  dir += '/';
  dir += ShardDirName(id.Hex(), shard_width);
  return dir;
}

std::string BlockPath(std::string_view backend, const BlockId& id, int shard_width) {
  const std::string hex = id.Hex();
  std::string path(backend);
  path += '/';
  path += ShardDirName(hex, shard_width);
  path += '/';
  path += hex;
  return path;
}

std::string BlockTmpPath(std::string_view backend, const BlockId& id, int shard_width) {
  return BlockPath(backend, id, shard_width) + ".tmp";
}

}  // namespace kvchaos::store
