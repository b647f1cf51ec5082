// GF(2) arithmetic of the two CRCs, shared by the CPU code and the CUDA kernels (header-only, so
// nvcc and the host compiler see the same definitions). Lets a CRC over a long stream be computed
// in independent chunks and combined afterwards, which is how the GPU splits a large IOV:
//   crc(A || B) = Shift(crc(A), |B|) ^ crc(B)      (the zlib crc32_combine identity)
// for CRCs whose init and final xor are both all-ones, as CRC-32/zlib and CRC-64/XZ are.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define KVCHAOS_HD __host__ __device__
#else
#define KVCHAOS_HD
#endif

namespace kvchaos::integrity::crc_math {

// Reflected ECMA-182 polynomial (CRC-64/XZ) and reflected IEEE polynomial (CRC-32/zlib).
inline constexpr uint64_t kCrc64Poly = 0xC96C5795D7870F42ULL;
inline constexpr uint32_t kCrc32Poly = 0xEDB88320U;

// a * b mod P in the reflected representation (bit 63 is x^0).
KVCHAOS_HD inline uint64_t MulMod64(uint64_t a, uint64_t b) {
  uint64_t m = uint64_t{1} << 63;
  uint64_t p = 0;
  for (int i = 0; i < 64; ++i) {
    if (a & m) p ^= b;
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ kCrc64Poly : b >> 1;
  }
  return p;
}

// Table of x^(2^k) mod P for k = 0..63, used by X8nMod64. Fill once with FillX2nTable64.
inline void FillX2nTable64(uint64_t table[64]) {
  uint64_t p = uint64_t{1} << 62;  // x^1
  table[0] = p;
  for (int k = 1; k < 64; ++k) table[k] = p = MulMod64(p, p);
}

// x^(8 n) mod P: the operator that appends n zero bytes.
KVCHAOS_HD inline uint64_t X8nMod64(const uint64_t table[64], uint64_t n) {
  uint64_t p = uint64_t{1} << 63;  // x^0
  int k = 3;                        // 8 n = n << 3
  while (n != 0) {
    if (n & 1) p = MulMod64(table[k & 63], p);
    n >>= 1;
    ++k;
  }
  return p;
}

// crc(A || B) from crc(A), crc(B) and |B| (CRC-64/XZ).
KVCHAOS_HD inline uint64_t Combine64(const uint64_t table[64], uint64_t crc_a, uint64_t crc_b, uint64_t len_b) {
  return MulMod64(X8nMod64(table, len_b), crc_a) ^ crc_b;
}

// Byte-at-a-time table (256 entries) of a reflected CRC.
inline void FillByteTable64(uint64_t table[256]) {
  for (uint32_t i = 0; i < 256; ++i) {
    uint64_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCrc64Poly : c >> 1;
    table[i] = c;
  }
}
inline void FillByteTable32(uint32_t table[256]) {
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCrc32Poly : c >> 1;
    table[i] = c;
  }
}

// Continues a CRC-64/XZ over bytes (crc of the bytes so far in, crc of everything out).
KVCHAOS_HD inline uint64_t Update64(const uint64_t table[256], uint64_t crc, const uint8_t* p, size_t n) {
  uint64_t r = ~crc;
  for (size_t i = 0; i < n; ++i) r = table[(r ^ p[i]) & 0xff] ^ (r >> 8);
  return ~r;
}
// Continues a CRC-32/zlib over bytes.
KVCHAOS_HD inline uint32_t Update32(const uint32_t table[256], uint32_t crc, const uint8_t* p, size_t n) {
  uint32_t r = ~crc;
  for (size_t i = 0; i < n; ++i) r = table[(r ^ p[i]) & 0xff] ^ (r >> 8);
  return ~r;
}

// One step of upstream's crc32_xor_int64 fold (REFERENCE.md).
KVCHAOS_HD inline uint64_t Fold(uint64_t h, uint32_t crc) {
  const uint64_t asr32 = static_cast<uint64_t>(static_cast<int64_t>(h) >> 32);
  return h ^ (static_cast<uint64_t>(crc) + 0x9e3779b97f4a7c15ULL + (h << 12) + asr32);
}

}  // namespace kvchaos::integrity::crc_math
