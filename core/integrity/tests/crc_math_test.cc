// The GF(2) helpers the CUDA kernels rely on, checked on the CPU against isa-l and zlib: the
// byte-table CRCs agree with the libraries and chunked CRCs combine to the whole-stream CRC.
#include "core/integrity/crc_math.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/rng.h"
#include "core/integrity/checksum.h"
#include "core/integrity/tests/test_blocks.h"

namespace kvchaos::integrity {
namespace {

using testutil::Bytes;

struct Tables {
  uint64_t crc64[256];
  uint32_t crc32[256];
  uint64_t x2n[64];
  Tables() {
    crc_math::FillByteTable64(crc64);
    crc_math::FillByteTable32(crc32);
    crc_math::FillX2nTable64(x2n);
  }
};

std::string RandomBytes(Rng& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng.Uniform(256));
  return s;
}

TEST(CrcMath, ByteTablesAgreeWithIsalAndZlib) {
  Tables t;
  Rng rng(7);
  for (size_t n : {0, 1, 7, 64, 1000, 4096}) {
    const std::string s = RandomBytes(rng, n);
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    EXPECT_EQ(crc_math::Update64(t.crc64, 0, p, n), Crc64Xz(0, Bytes(s))) << "length " << n;
    EXPECT_EQ(crc_math::Update32(t.crc32, 0, p, n), Crc32(Bytes(s))) << "length " << n;
  }
}

TEST(CrcMath, ChunkCrcsCombineToTheWholeStream) {
  Tables t;
  Rng rng(11);
  for (int round = 0; round < 50; ++round) {
    const std::string a = RandomBytes(rng, rng.Uniform(3000));
    const std::string b = RandomBytes(rng, rng.Uniform(3000));
    const uint64_t whole = Crc64Xz(0, Bytes(a + b));
    const uint64_t combined = crc_math::Combine64(t.x2n, Crc64Xz(0, Bytes(a)), Crc64Xz(0, Bytes(b)), b.size());
    ASSERT_EQ(combined, whole) << "|a|=" << a.size() << " |b|=" << b.size();
  }
  // Combining with an empty B is the identity.
  EXPECT_EQ(crc_math::Combine64(t.x2n, 0x1234, 0, 0), 0x1234u);
}

}  // namespace
}  // namespace kvchaos::integrity
