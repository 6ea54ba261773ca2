// csrc/util/crc32c_sse42.cc
// CRC-32C with the SSE4.2 crc32 instruction. Built with -msse4.2 and called
// only when HasSse42(); must equal ExtendPortable bit for bit (crc32c_test.cc).
#include <cstring>

#include "util/crc32c.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace chitta::crc32c {

uint32_t ExtendSse42(uint32_t crc, const void* data, size_t n) {
#if defined(__x86_64__)
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = ~crc;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
#else
  return ExtendPortable(crc, data, n);
#endif
}

}  // namespace chitta::crc32c
