// csrc/util/sha256_test.cc
#include "util/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace chitta::sha256 {
namespace {

std::string Hex(const std::string& s) { return HexDigest(s.data(), s.size()); }

// The FIPS 180-4 example messages and NIST's long-message vector.
TEST(Sha256, PublishedVectors) {
  EXPECT_EQ(Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the padding boundaries (55/56/64 bytes) give 32 bytes each and differ.
TEST(Sha256, PaddingBoundaries) {
  std::string last;
  for (size_t n : {55u, 56u, 63u, 64u, 65u, 119u, 120u}) {
    const std::string h = Hex(std::string(n, 'a'));
    EXPECT_EQ(h.size(), 64u);
    EXPECT_NE(h, last);
    last = h;
  }
  EXPECT_EQ(Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

}  // namespace
}  // namespace chitta::sha256
