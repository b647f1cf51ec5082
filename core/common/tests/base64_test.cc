// Base64: RFC 4648's test vectors, every byte value round-trips, and text that is not canonical
// padded base64 is refused rather than decoded to something else.
#include "core/common/base64.h"

#include <gtest/gtest.h>

namespace kvchaos {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},         {"f", "Zg=="},     {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},  {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(plain), encoded) << plain;
    EXPECT_EQ(Base64Decode(encoded), plain) << encoded;
  }
}

TEST(Base64Test, EveryByteRoundTrips) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (size_t len = 0; len <= all.size(); len += 37) {
    const std::string part = all.substr(all.size() - len);
    EXPECT_EQ(Base64Decode(Base64Encode(part)), part) << "length " << len;
  }
  EXPECT_EQ(Base64Encode("\xff\xfe"), "//4=");
}

TEST(Base64Test, NonCanonicalTextIsRefused) {
  for (std::string_view bad : {"Zg", "Zg=", "Z===", "Zg==Zg==", "Zm9v!A==", "Zh==", "Zm9=", "=Zm9", "Zm 9v"}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << "'" << bad << "' was decoded";
  }
}

}  // namespace
}  // namespace kvchaos
