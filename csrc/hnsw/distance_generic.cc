// csrc/hnsw/distance_generic.cc
// Portable reference dot product. Eight partial sums keep it close in rounding
// to the SIMD kernel (distance_test.cc compares them within a tolerance).
#include "hnsw/distance.h"

namespace chitta::hnsw {

float DotGeneric(const float* a, const float* b, size_t dim) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= dim; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float tail = 0.0f;
  for (; i < dim; ++i) tail += a[i] * b[i];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail;
}

}  // namespace chitta::hnsw
