// csrc/hamming/binarize.cc
#include "hamming/binarize.h"

#include <cmath>
#include <string>

namespace chitta::hamming {

size_t FindNonFinite(const float* values, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) return i;
  }
  return n;
}

void BinarizeUnchecked(const float* vectors, size_t n, size_t dim, const float* mean,
                       uint64_t* out) {
  const size_t words = WordsForDim(dim);
  for (size_t r = 0; r < n; ++r) {
    const float* v = vectors + r * dim;
    uint64_t* code = out + r * words;
    for (size_t w = 0; w < words; ++w) {
      uint64_t bits = 0;
      const size_t lo = 64 * w;
      const size_t hi = lo + 64 < dim ? lo + 64 : dim;
      for (size_t i = lo; i < hi; ++i) {
        bits |= static_cast<uint64_t>(v[i] - mean[i] > 0.0f) << (i - lo);
      }
      code[w] = bits;
    }
  }
}

Status Binarize(const float* vectors, size_t n, size_t dim, const float* mean, uint64_t* out) {
  if (dim == 0) return Status::InvalidArgument("dim must be positive");
  if (FindNonFinite(mean, dim) != dim) return Status::InvalidArgument("mean has a NaN or inf");
  const size_t bad = FindNonFinite(vectors, n * dim);
  if (bad != n * dim) {
    return Status::InvalidArgument("vector " + std::to_string(bad / dim) + " has a NaN or inf");
  }
  BinarizeUnchecked(vectors, n, dim, mean, out);
  return Status::OK();
}

}  // namespace chitta::hamming
