// csrc/util/crc32c_test.cc
#include "util/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace chitta::crc32c {
namespace {

// RFC 3720 section B.4 test vectors.
TEST(Crc32c, Rfc3720Vectors) {
  std::vector<uint8_t> buf(32, 0);
  EXPECT_EQ(0x8A9136AAu, Value(buf.data(), buf.size()));
  std::fill(buf.begin(), buf.end(), 0xFF);
  EXPECT_EQ(0x62A8AB43u, Value(buf.data(), buf.size()));
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(0x46DD794Eu, Value(buf.data(), buf.size()));
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<uint8_t>(31 - i);
  EXPECT_EQ(0x113FDB5Cu, Value(buf.data(), buf.size()));
  const std::string check = "123456789";
  EXPECT_EQ(0xE3069283u, Value(check.data(), check.size()));
}

TEST(Crc32c, PortableAndHardwareAgree) {
  if (!HasSse42()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::mt19937_64 rng(7);
  for (size_t n = 0; n < 300; ++n) {
    std::vector<uint8_t> buf(n);
    for (auto& b : buf) b = static_cast<uint8_t>(rng());
    uint32_t seed = static_cast<uint32_t>(rng());
    ASSERT_EQ(ExtendPortable(seed, buf.data(), n), ExtendSse42(seed, buf.data(), n)) << n;
  }
}

// Large buffers take the three-chain path (blocks of 3 x 256 and 3 x 8192
// bytes): every boundary around those sizes, at unaligned starts.
TEST(Crc32c, ThreeChainPathAgreesWithPortable) {
  if (!HasSse42()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::mt19937_64 rng(11);
  std::vector<uint8_t> buf(200003 + 8);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  const size_t sizes[] = {767,  768,   769,   775,   3 * 8192 - 1, 3 * 8192,     3 * 8192 + 1,
                          3 * 8192 + 768, 6 * 8192 + 3 * 256 + 7, 100003, 200003};
  for (size_t n : sizes) {
    for (size_t start = 0; start < 8; start += 3) {
      uint32_t seed = static_cast<uint32_t>(rng());
      ASSERT_EQ(ExtendPortable(seed, buf.data() + start, n), ExtendSse42(seed, buf.data() + start, n))
          << n << " at " << start;
    }
  }
}

TEST(Crc32c, ExtendIsConcatenation) {
  const std::string a = "hello ", b = "world";
  const std::string ab = a + b;
  EXPECT_EQ(Value(ab.data(), ab.size()), Extend(Value(a.data(), a.size()), b.data(), b.size()));
}

}  // namespace
}  // namespace chitta::crc32c
