// csrc/recall/word_scan_avx2.cc
// AVX2 u8 x s8 dot products for the word scan's first pass (word_scan.h), for
// CPUs without AVX-512 VNNI. Built with -mavx2 -mpopcnt; picked only when
// util/cpu.h allows kDot8Avx2Features.
//
// Exact integer arithmetic, equal to Dot8RowsGeneric (word_scan_test.cc checks):
// both operands are widened to 16 bits (the query's bytes with zeros, the codes
// with their sign) and multiplied by vpmaddwd, whose pair sums (at most
// 2 * 255 * 128) fit its 32-bit lanes. vpmaddubsw would take the bytes directly
// but saturates its 16-bit pair sums, so it is not used. No STL in this file: an
// inline template instantiated here would carry AVX2 code into the rest of the
// program.
#include <immintrin.h>

#include "recall/word_scan.h"

// Built with exactly the features word_scan.cc checks for (CMakeLists.txt).
static_assert(CHITTA_CPU_COMPILED_FEATURES == chitta::recall::kDot8Avx2Features,
              "word_scan_avx2.cc: compile flags differ from kDot8Avx2Features (see CMakeLists.txt)");

namespace chitta::recall {

namespace {

// s + the products of 32 bytes of the query (widened: q_lo, q_hi) with 32 codes.
inline __m256i Acc(__m256i s, __m256i q_lo, __m256i q_hi, const int8_t* c) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c));
  const __m256i c_lo = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(raw));
  const __m256i c_hi = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(raw, 1));
  s = _mm256_add_epi32(s, _mm256_madd_epi16(q_lo, c_lo));
  return _mm256_add_epi32(s, _mm256_madd_epi16(q_hi, c_hi));
}

inline int32_t Sum(__m256i v) {
  const __m128i x = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i y = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4e));
  return _mm_cvtsi128_si32(_mm_add_epi32(y, _mm_shuffle_epi32(y, 0xb1)));
}

}  // namespace

void Dot8RowsAvx2(const uint8_t* qu, const int8_t* codes, size_t stride, size_t n, int32_t* out) {
  // The query widened once per 32 bytes, reused by four rows at a time (four
  // independent accumulator chains).
  size_t r = 0;
  for (; r + 4 <= n; r += 4) {
    const int8_t* c = codes + r * stride;
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i < stride; i += 32) {
      const __m128i* qp = reinterpret_cast<const __m128i*>(qu + i);
      const __m256i q_lo = _mm256_cvtepu8_epi16(_mm_loadu_si128(qp));
      const __m256i q_hi = _mm256_cvtepu8_epi16(_mm_loadu_si128(qp + 1));
      s0 = Acc(s0, q_lo, q_hi, c + i);
      s1 = Acc(s1, q_lo, q_hi, c + stride + i);
      s2 = Acc(s2, q_lo, q_hi, c + 2 * stride + i);
      s3 = Acc(s3, q_lo, q_hi, c + 3 * stride + i);
    }
    out[r] = Sum(s0);
    out[r + 1] = Sum(s1);
    out[r + 2] = Sum(s2);
    out[r + 3] = Sum(s3);
  }
  for (; r < n; ++r) {
    const int8_t* c = codes + r * stride;
    __m256i s0 = _mm256_setzero_si256();
    for (size_t i = 0; i < stride; i += 32) {
      const __m128i* qp = reinterpret_cast<const __m128i*>(qu + i);
      s0 = Acc(s0, _mm256_cvtepu8_epi16(_mm_loadu_si128(qp)),
               _mm256_cvtepu8_epi16(_mm_loadu_si128(qp + 1)), c + i);
    }
    out[r] = Sum(s0);
  }
}

}  // namespace chitta::recall
