#include <string>

#include "base/base32.h"
#include "base/base64.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

// RFC 4648 §10 test vectors.
TEST(Base32, RfcVectorsWithoutPadding) {
  EXPECT_EQ(base32Encode(""), "");
  EXPECT_EQ(base32Encode("f"), "MY");
  EXPECT_EQ(base32Encode("fo"), "MZXQ");
  EXPECT_EQ(base32Encode("foobar"), "MZXW6YTBOI");
  EXPECT_EQ(base32Decode("MZXW6YTBOI"), "foobar");
  EXPECT_EQ(base32Decode("MZXQ"), "fo");
  EXPECT_FALSE(base32Decode("MZXQ===="));
  EXPECT_FALSE(base32Decode("mzxq"));
}

TEST(Base64Url, NoPaddingAndTheUrlAlphabet) {
  EXPECT_EQ(base64UrlEncode("foob"), "Zm9vYg");
  EXPECT_EQ(base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_EQ(base64UrlDecode("-_8"), "\xfb\xff");
  EXPECT_EQ(base64UrlDecode("Zm9vYg"), "foob");
  EXPECT_FALSE(base64UrlDecode("Zm9vYg=="));  // padded: not base64url as JWTs use it
  EXPECT_FALSE(base64UrlDecode("+/8"));
  EXPECT_FALSE(base64UrlDecode("Z"));
  const std::string all = [] {
    std::string s;
    for (int c = 0; c < 256; ++c)
      s.push_back(static_cast<char>(c));
    return s;
  }();
  EXPECT_EQ(base64UrlDecode(base64UrlEncode(all)), all);
}

}  // namespace
}  // namespace shoal
