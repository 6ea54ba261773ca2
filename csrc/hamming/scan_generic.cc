// csrc/hamming/scan_generic.cc
// Portable Hamming scan: the reference the SIMD kernels must match bit for bit
// (scan_test.cc checks). Built without ISA flags.
#include <cstring>

#include "hamming/scan.h"

namespace chitta::hamming {

size_t FilterGeneric(const uint64_t* query, const uint64_t* codes, size_t n, size_t words,
                     uint32_t threshold, uint32_t* out_index, uint32_t* out_dist) {
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t* code = codes + i * words;
    uint32_t d = 0;
    for (size_t w = 0; w < words; ++w) {
      d += static_cast<uint32_t>(__builtin_popcountll(code[w] ^ query[w]));
    }
    if (d < threshold) {
      out_index[kept] = static_cast<uint32_t>(i);
      out_dist[kept] = d;
      ++kept;
    }
  }
  return kept;
}

uint64_t ReadBytesGeneric(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t acc[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    uint64_t v[4];
    std::memcpy(v, p + i, 32);
    acc[0] ^= v[0];
    acc[1] ^= v[1];
    acc[2] ^= v[2];
    acc[3] ^= v[3];
  }
  uint64_t r = acc[0] ^ acc[1] ^ acc[2] ^ acc[3];
  for (; i < n; ++i) r += p[i];
  return r;
}

}  // namespace chitta::hamming
