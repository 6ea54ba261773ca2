// csrc/hamming/scan_avx512.cc
// AVX-512 Hamming scan using VPOPCNTQ. Built with -mavx512f -mavx512bw
// -mavx512vl -mavx512vpopcntdq -mpopcnt; picked by dispatch.cc.
// Must match scan_generic.cc bit-for-bit (scan_test.cc checks).
//
// Eight codes are handled per step and their per-lane counts reduced together
// with lane shuffles, so no code needs its own horizontal sum. 256-bit codes
// (the common case) pack two codes per register. Survivors of the threshold
// test are written with compress stores. No STL in this file (see
// scan_avx2.cc for why).
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own
// _mm512_undefined_* helpers (GCC bug 105593); silence it for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "hamming/scan.h"

// Built with exactly the features dispatch.cc checks for (CMakeLists.txt).
static_assert(CHITTA_CPU_COMPILED_FEATURES == chitta::hamming::kAvx512Features,
              "scan_avx512.cc: compile flags differ from kAvx512Features (see CMakeLists.txt)");

namespace chitta::hamming {
namespace {

constexpr int kLo = _MM_SHUFFLE(2, 0, 2, 0);
constexpr int kHi = _MM_SHUFFLE(3, 1, 3, 1);

// Sum of 128-bit lane pairs of two vectors: [a.L0+a.L1, a.L2+a.L3, b.L0+b.L1, b.L2+b.L3].
inline __m512i FoldLanes(__m512i a, __m512i b) {
  return _mm512_add_epi64(_mm512_shuffle_i64x2(a, b, kLo), _mm512_shuffle_i64x2(a, b, kHi));
}

inline __m512i FoldPairs(__m512i a, __m512i b) {
  return _mm512_add_epi64(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
}

// Eight per-code lane-count vectors -> the eight totals, in code order.
inline __m512i ReduceEight(const __m512i* p) {
  const __m512i b0 = FoldLanes(FoldPairs(p[0], p[1]), FoldPairs(p[2], p[3]));
  const __m512i b1 = FoldLanes(FoldPairs(p[4], p[5]), FoldPairs(p[6], p[7]));
  return FoldLanes(b0, b1);
}

inline size_t Emit(__m512i dist, __mmask8 mask, size_t base, uint32_t* out_index,
                   uint32_t* out_dist, size_t kept) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i index = _mm256_add_epi32(iota, _mm256_set1_epi32(static_cast<int>(base)));
  _mm256_mask_compressstoreu_epi32(out_index + kept, mask, index);
  _mm256_mask_compressstoreu_epi32(out_dist + kept, mask, _mm512_cvtepi64_epi32(dist));
  return kept + static_cast<size_t>(_mm_popcnt_u32(mask));
}

inline uint32_t ScalarDistance(const uint64_t* query, const uint64_t* code, size_t words) {
  uint32_t d = 0;
  for (size_t w = 0; w < words; ++w) {
    d += static_cast<uint32_t>(_mm_popcnt_u64(code[w] ^ query[w]));
  }
  return d;
}

}  // namespace

size_t FilterAvx512(const uint64_t* query, const uint64_t* codes, size_t n, size_t words,
                    uint32_t threshold, uint32_t* out_index, uint32_t* out_dist) {
  size_t kept = 0;
  size_t i = 0;
  const __m512i thr = _mm512_set1_epi64(static_cast<long long>(threshold));
  if (words == 4) {
    // Register j holds codes 2j and 2j+1. After FoldPairs/FoldLanes the totals
    // come out in the order c0 c2 c1 c3 c4 c6 c5 c7; the permute (only paid
    // when some code passes) restores code order.
    const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(query)));
    const __m512i order = _mm512_setr_epi64(0, 2, 1, 3, 4, 6, 5, 7);
    for (; i + 8 <= n; i += 8) {
      const uint64_t* c = codes + i * 4;
      const __m512i p0 = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(c), q));
      const __m512i p1 = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(c + 8), q));
      const __m512i p2 = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(c + 16), q));
      const __m512i p3 = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(c + 24), q));
      const __m512i t = FoldLanes(FoldPairs(p0, p1), FoldPairs(p2, p3));
      if (_mm512_cmplt_epu64_mask(t, thr) == 0) continue;
      const __m512i dist = _mm512_permutexvar_epi64(order, t);
      kept = Emit(dist, _mm512_cmplt_epu64_mask(dist, thr), i, out_index, out_dist, kept);
    }
  } else {
    // Any width: each code's words in chunks of 8, the last chunk masked.
    const size_t full = words / 8;
    const size_t rest = words % 8;
    const __mmask8 tail_mask = static_cast<__mmask8>((1u << rest) - 1u);
    for (; i + 8 <= n; i += 8) {
      const uint64_t* c = codes + i * words;
      __m512i acc[8];
      for (int j = 0; j < 8; ++j) acc[j] = _mm512_setzero_si512();
      for (size_t k = 0; k < full; ++k) {
        const __m512i q = _mm512_loadu_si512(query + 8 * k);
        for (int j = 0; j < 8; ++j) {
          const __m512i x = _mm512_xor_si512(_mm512_loadu_si512(c + j * words + 8 * k), q);
          acc[j] = _mm512_add_epi64(acc[j], _mm512_popcnt_epi64(x));
        }
      }
      if (rest != 0) {
        const __m512i q = _mm512_maskz_loadu_epi64(tail_mask, query + 8 * full);
        for (int j = 0; j < 8; ++j) {
          const __m512i x = _mm512_xor_si512(
              _mm512_maskz_loadu_epi64(tail_mask, c + j * words + 8 * full), q);
          acc[j] = _mm512_add_epi64(acc[j], _mm512_popcnt_epi64(x));
        }
      }
      const __m512i dist = ReduceEight(acc);
      const __mmask8 mask = _mm512_cmplt_epu64_mask(dist, thr);
      if (mask != 0) kept = Emit(dist, mask, i, out_index, out_dist, kept);
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

}  // namespace chitta::hamming
