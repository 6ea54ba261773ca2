// csrc/recall/word_scan_avx2.cc
// AVX2 u8 x s8 dot products for the word scan's first pass (word_scan.h), for
// CPUs without AVX-512 VNNI. Built with -mavx2 -mpopcnt; picked only when
// util/cpu.h allows kDot8Avx2Features.
//
// Exact integer arithmetic, equal to Dot8RowsGeneric (word_scan_test.cc checks):
// vpmaddubsw multiplies the query's bytes (unsigned, at most 127: kQueryOffset +
// kQueryLevel) by the codes (signed, |c| <= 127) and adds pairs into 16 bits, where
// a pair (at most 2 * 127 * 127 = 32,258) cannot saturate; vpmaddwd by ones widens
// those to 32 bits. No STL in this file: an inline template instantiated here would
// carry AVX2 code into the rest of the program.
#include <immintrin.h>

#include "recall/word_scan.h"

// Built with exactly the features word_scan.cc checks for (CMakeLists.txt).
static_assert(CHITTA_CPU_COMPILED_FEATURES == chitta::recall::kDot8Avx2Features,
              "word_scan_avx2.cc: compile flags differ from kDot8Avx2Features (see CMakeLists.txt)");

namespace chitta::recall {

namespace {

// s + the products of 32 query bytes `q` with the 32 codes at c.
inline __m256i Acc(__m256i s, __m256i q, const int8_t* c, __m256i ones) {
  const __m256i pairs =
      _mm256_maddubs_epi16(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c)));
  return _mm256_add_epi32(s, _mm256_madd_epi16(pairs, ones));
}

inline int32_t Sum(__m256i v) {
  const __m128i x = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i y = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4e));
  return _mm_cvtsi128_si32(_mm_add_epi32(y, _mm_shuffle_epi32(y, 0xb1)));
}

}  // namespace

void Dot8RowsAvx2(const uint8_t* qu, const int8_t* codes, size_t stride, size_t n, int32_t* out) {
  // Four rows at a time: four independent accumulator chains sharing each load
  // of the query.
  const __m256i ones = _mm256_set1_epi16(1);
  size_t r = 0;
  for (; r + 4 <= n; r += 4) {
    const int8_t* c = codes + r * stride;
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i < stride; i += 32) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qu + i));
      s0 = Acc(s0, q, c + i, ones);
      s1 = Acc(s1, q, c + stride + i, ones);
      s2 = Acc(s2, q, c + 2 * stride + i, ones);
      s3 = Acc(s3, q, c + 3 * stride + i, ones);
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
      s0 = Acc(s0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qu + i)), c + i, ones);
    }
    out[r] = Sum(s0);
  }
}

}  // namespace chitta::recall
