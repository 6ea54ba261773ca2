// csrc/recall/word_scan_avx512.cc
// AVX-512 VNNI u8 x s8 dot products for the word scan's first pass
// (word_scan.h). Built with -mavx512f -mavx512bw -mavx512vnni -mpopcnt; picked
// only when util/cpu.h allows kDot8VnniFeatures.
// Integer arithmetic: equal to Dot8RowsGeneric (word_scan_test.cc checks).
#include <immintrin.h>

// gcc 12 warns inside its own _mm512_reduce_add_epi32 (an "undefined" vector
// operand it passes on purpose); the warning is about the header, not us.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "recall/word_scan.h"

// Built with exactly the features word_scan.cc checks for (CMakeLists.txt).
static_assert(CHITTA_CPU_COMPILED_FEATURES == chitta::recall::kDot8VnniFeatures,
              "word_scan_avx512.cc: compile flags differ from kDot8VnniFeatures (see CMakeLists.txt)");

namespace chitta::recall {

namespace {

inline __m512i Acc(__m512i s, const uint8_t* qu, const int8_t* c) {
  return _mm512_dpbusd_epi32(s, _mm512_loadu_si512(qu), _mm512_loadu_si512(c));
}

}  // namespace

void Dot8RowsVnni(const uint8_t* qu, const int8_t* codes, size_t stride, size_t n, int32_t* out) {
  // Four rows at a time: four independent accumulator chains (the adds'
  // latency, not their throughput, bounds one row alone).
  size_t r = 0;
  for (; r + 4 <= n; r += 4) {
    const int8_t* c = codes + r * stride;
    __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i < stride; i += 64) {
      s0 = Acc(s0, qu + i, c + i);
      s1 = Acc(s1, qu + i, c + stride + i);
      s2 = Acc(s2, qu + i, c + 2 * stride + i);
      s3 = Acc(s3, qu + i, c + 3 * stride + i);
    }
    out[r] = _mm512_reduce_add_epi32(s0);
    out[r + 1] = _mm512_reduce_add_epi32(s1);
    out[r + 2] = _mm512_reduce_add_epi32(s2);
    out[r + 3] = _mm512_reduce_add_epi32(s3);
  }
  for (; r < n; ++r) {
    const int8_t* c = codes + r * stride;
    __m512i s0 = _mm512_setzero_si512();
    for (size_t i = 0; i < stride; i += 64) s0 = Acc(s0, qu + i, c + i);
    out[r] = _mm512_reduce_add_epi32(s0);
  }
}

}  // namespace chitta::recall
