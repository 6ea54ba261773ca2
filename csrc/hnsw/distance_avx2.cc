// csrc/hnsw/distance_avx2.cc
// AVX2 + FMA dot product. Built with -mavx2 -mpopcnt -mfma; picked by
// distance.cc only when util/cpu.h allows kDotAvx2Features. Agrees with DotGeneric within
// float rounding (distance_test.cc checks).
#include <immintrin.h>

#include "hnsw/distance.h"

// Built with exactly the features distance.cc checks for (CMakeLists.txt).
static_assert(CHITTA_CPU_COMPILED_FEATURES == chitta::hnsw::kDotAvx2Features,
              "distance_avx2.cc: compile flags differ from kDotAvx2Features (see CMakeLists.txt)");

namespace chitta::hnsw {

float DotAvx2(const float* a, const float* b, size_t dim) {
  // Four independent accumulators hide the FMA latency.
  __m256 s0 = _mm256_setzero_ps();
  __m256 s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps();
  __m256 s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  for (; i + 8 <= dim; i += 8) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  __m128 lo = _mm256_castps256_ps128(s);
  __m128 hi = _mm256_extractf128_ps(s, 1);
  __m128 q = _mm_add_ps(lo, hi);
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));
  q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 0x55));
  float sum = _mm_cvtss_f32(q);
  for (; i < dim; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace chitta::hnsw
