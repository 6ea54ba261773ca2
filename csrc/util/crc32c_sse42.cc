// csrc/util/crc32c_sse42.cc
// CRC-32C with the SSE4.2 crc32 instruction. Built with -msse4.2 -mpopcnt and
// called only when util/cpu.h allows kSse42Features; must equal ExtendPortable bit for bit (crc32c_test.cc).
//
// One chain of crc32 instructions is bound by their 3-cycle latency. Large
// buffers run three independent chains over three adjacent blocks and join
// them: in the raw (not inverted) register domain a CRC is linear, so
// reg(A || B) = Shift(reg(A), |B|) ^ reg0(B), where reg0 starts at zero and
// Shift is "feed |B| zero bytes", a fixed linear map held as four byte tables
// per block size (the scheme of Mark Adler's crc32c.c).
#include <array>
#include <cstring>

#include "util/crc32c.h"

// Built with exactly the features crc32c.cc checks for (CMakeLists.txt).
static_assert(CHITTA_CPU_COMPILED_FEATURES == chitta::crc32c::kSse42Features,
              "crc32c_sse42.cc: compile flags differ from kSse42Features (see CMakeLists.txt)");

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace chitta::crc32c {

#if defined(__x86_64__)
namespace {

constexpr size_t kLong = 8192;  // bytes per chain, large blocks
constexpr size_t kShort = 256;  // bytes per chain, the rest down to 3 * kShort

// The map "feed n zero bytes" as byte tables: Shift(r) = t[0][r&255] ^ ... ^ t[3][r>>24].
struct ShiftTable {
  std::array<std::array<uint32_t, 256>, 4> t{};
  explicit ShiftTable(size_t n) {
    uint32_t basis[32];
    for (int bit = 0; bit < 32; ++bit) {
      uint64_t r = uint64_t{1} << bit;
      for (size_t i = 0; i < n / 8; ++i) r = _mm_crc32_u64(r, 0);
      basis[bit] = static_cast<uint32_t>(r);
    }
    for (int k = 0; k < 4; ++k) {
      for (uint32_t b = 0; b < 256; ++b) {
        uint32_t v = 0;
        for (int bit = 0; bit < 8; ++bit) {
          if (b & (1u << bit)) v ^= basis[8 * k + bit];
        }
        t[k][b] = v;
      }
    }
  }
  uint32_t operator()(uint32_t r) const {
    return t[0][r & 0xFF] ^ t[1][(r >> 8) & 0xFF] ^ t[2][(r >> 16) & 0xFF] ^ t[3][r >> 24];
  }
};

inline uint64_t Load64(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

// Runs `c` (a raw register) over n = 3 * block bytes at p in three chains.
template <size_t kBlock>
inline uint64_t ThreeChains(uint64_t c, const uint8_t* p, const ShiftTable& shift) {
  uint64_t c1 = 0, c2 = 0;
  for (size_t i = 0; i < kBlock; i += 8) {
    c = _mm_crc32_u64(c, Load64(p + i));
    c1 = _mm_crc32_u64(c1, Load64(p + kBlock + i));
    c2 = _mm_crc32_u64(c2, Load64(p + 2 * kBlock + i));
  }
  c = shift(static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c1);
  return shift(static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c2);
}

}  // namespace
#endif

uint32_t ExtendSse42(uint32_t crc, const void* data, size_t n) {
#if defined(__x86_64__)
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = static_cast<uint32_t>(~crc);
  if (n >= 3 * kShort) {
    static const ShiftTable long_shift(kLong), short_shift(kShort);
    for (; n >= 3 * kLong; p += 3 * kLong, n -= 3 * kLong) c = ThreeChains<kLong>(c, p, long_shift);
    for (; n >= 3 * kShort; p += 3 * kShort, n -= 3 * kShort) c = ThreeChains<kShort>(c, p, short_shift);
  }
  for (; n >= 8; p += 8, n -= 8) c = _mm_crc32_u64(c, Load64(p));
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
#else
  return ExtendPortable(crc, data, n);
#endif
}

}  // namespace chitta::crc32c
