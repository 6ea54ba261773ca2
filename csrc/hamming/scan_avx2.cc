// csrc/hamming/scan_avx2.cc
// AVX2 Hamming scan. Built with -mavx2 -mpopcnt; picked by dispatch.cc.
// Must match scan_generic.cc bit-for-bit (scan_test.cc checks).
//
// Popcount is the nibble-lookup method (vpshufb on each half-byte, then
// vpsadbw to sum bytes into the four u64 lanes). Four codes are reduced
// together so each needs no horizontal sum of its own. No STL in this file:
// an inline template instantiated here would carry AVX2 code into the rest of
// the program.
#include <immintrin.h>

#include "hamming/scan.h"

// Built with exactly the features dispatch.cc checks for (CMakeLists.txt).
static_assert(CHITTA_CPU_COMPILED_FEATURES == chitta::hamming::kAvx2Features,
              "scan_avx2.cc: compile flags differ from kAvx2Features (see CMakeLists.txt)");

namespace chitta::hamming {
namespace {

inline __m256i PopcountLanes(__m256i v) {
  const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,  //
                                       0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_and_si256(v, low);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
  const __m256i bytes = _mm256_add_epi8(_mm256_shuffle_epi8(lut, lo), _mm256_shuffle_epi8(lut, hi));
  return _mm256_sad_epu8(bytes, _mm256_setzero_si256());
}

// Four vectors of per-lane counts (one per code) -> one vector of the four
// codes' totals, in code order.
inline __m256i ReduceFour(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
  const __m256i s01 = _mm256_add_epi64(_mm256_unpacklo_epi64(v0, v1), _mm256_unpackhi_epi64(v0, v1));
  const __m256i s23 = _mm256_add_epi64(_mm256_unpacklo_epi64(v2, v3), _mm256_unpackhi_epi64(v2, v3));
  return _mm256_add_epi64(_mm256_permute2x128_si256(s01, s23, 0x20),
                          _mm256_permute2x128_si256(s01, s23, 0x31));
}

inline __m256i Load(const uint64_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

inline size_t Emit(__m256i dist, __m256i threshold, size_t base, uint32_t* out_index,
                   uint32_t* out_dist, size_t kept) {
  const int mask = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(threshold, dist)));
  if (mask == 0) return kept;
  alignas(32) uint64_t d[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(d), dist);
  for (int j = 0; j < 4; ++j) {
    if (mask & (1 << j)) {
      out_index[kept] = static_cast<uint32_t>(base + j);
      out_dist[kept] = static_cast<uint32_t>(d[j]);
      ++kept;
    }
  }
  return kept;
}

inline uint32_t ScalarDistance(const uint64_t* query, const uint64_t* code, size_t words) {
  uint32_t d = 0;
  for (size_t w = 0; w < words; ++w) {
    d += static_cast<uint32_t>(_mm_popcnt_u64(code[w] ^ query[w]));
  }
  return d;
}

}  // namespace

size_t FilterAvx2(const uint64_t* query, const uint64_t* codes, size_t n, size_t words,
                  uint32_t threshold, uint32_t* out_index, uint32_t* out_dist) {
  size_t kept = 0;
  size_t i = 0;
  const __m256i thr = _mm256_set1_epi64x(static_cast<long long>(threshold));
  if (words == 4) {
    const __m256i q = Load(query);
    for (; i + 4 <= n; i += 4) {
      const uint64_t* c = codes + i * 4;
      const __m256i v0 = PopcountLanes(_mm256_xor_si256(Load(c), q));
      const __m256i v1 = PopcountLanes(_mm256_xor_si256(Load(c + 4), q));
      const __m256i v2 = PopcountLanes(_mm256_xor_si256(Load(c + 8), q));
      const __m256i v3 = PopcountLanes(_mm256_xor_si256(Load(c + 12), q));
      kept = Emit(ReduceFour(v0, v1, v2, v3), thr, i, out_index, out_dist, kept);
    }
  } else if (words % 4 == 0) {
    for (; i + 4 <= n; i += 4) {
      const uint64_t* c = codes + i * words;
      __m256i a0 = _mm256_setzero_si256();
      __m256i a1 = a0;
      __m256i a2 = a0;
      __m256i a3 = a0;
      for (size_t w = 0; w < words; w += 4) {
        const __m256i q = Load(query + w);
        a0 = _mm256_add_epi64(a0, PopcountLanes(_mm256_xor_si256(Load(c + w), q)));
        a1 = _mm256_add_epi64(a1, PopcountLanes(_mm256_xor_si256(Load(c + words + w), q)));
        a2 = _mm256_add_epi64(a2, PopcountLanes(_mm256_xor_si256(Load(c + 2 * words + w), q)));
        a3 = _mm256_add_epi64(a3, PopcountLanes(_mm256_xor_si256(Load(c + 3 * words + w), q)));
      }
      kept = Emit(ReduceFour(a0, a1, a2, a3), thr, i, out_index, out_dist, kept);
    }
  }
  for (; i < n; ++i) {
    const uint32_t d = ScalarDistance(query, codes + i * words, words);
    if (d < threshold) {
      out_index[kept] = static_cast<uint32_t>(i);
      out_dist[kept] = d;
      ++kept;
    }
  }
  return kept;
}

uint64_t ReadBytesAvx2(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  __m256i a0 = _mm256_setzero_si256();
  __m256i a1 = a0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 = _mm256_xor_si256(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_xor_si256(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_xor_si256(a0, a1));
  uint64_t r = lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3];
  for (; i < n; ++i) r += p[i];
  return r;
}

}  // namespace chitta::hamming
