// csrc/hnsw/distance_avx512.cc
// AVX-512F dot product. Built with -mavx512f -mpopcnt; picked by
// distance.cc only when util/cpu.h allows kDotAvx512Features. A scalar loop takes the
// last dim % 16 values. Agrees with DotGeneric within float rounding
// (distance_test.cc checks).
#include <immintrin.h>

// gcc 12 warns inside its own _mm512_reduce_add_ps (an "undefined" vector
// operand it passes on purpose); the warning is about the header, not us.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "hnsw/distance.h"

// Built with exactly the features distance.cc checks for (CMakeLists.txt).
static_assert(CHITTA_CPU_COMPILED_FEATURES == chitta::hnsw::kDotAvx512Features,
              "distance_avx512.cc: compile flags differ from kDotAvx512Features (see CMakeLists.txt)");

namespace chitta::hnsw {

float DotAvx512(const float* a, const float* b, size_t dim) {
  __m512 s0 = _mm512_setzero_ps();
  __m512 s1 = _mm512_setzero_ps();
  __m512 s2 = _mm512_setzero_ps();
  __m512 s3 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= dim; i += 64) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
    s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
  }
  for (; i + 16 <= dim; i += 16) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
  }
  float sum =
      _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  for (; i < dim; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace chitta::hnsw
