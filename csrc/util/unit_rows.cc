// csrc/util/unit_rows.cc
#include "util/unit_rows.h"

#include <cmath>

namespace chitta::util {

float RowNorm(const float* row, size_t dim) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= dim; i += 8) {
    for (size_t j = 0; j < 8; ++j) {
      const double v = row[i + j];
      lane[j] += v * v;
    }
  }
  for (size_t j = 0; i < dim; ++i, ++j) {
    const double v = row[i];
    lane[j] += v * v;
  }
  double sum = 0;
  for (double l : lane) sum += l;
  return static_cast<float>(std::sqrt(sum));
}

size_t UnitRows(const float* src, size_t rows, size_t dim, float* dst, float* norms) {
  size_t out = 0;
  for (size_t r = 0; r < rows; ++r) {
    const float* row = src + r * dim;
    const float norm = RowNorm(row, dim);
    norms[r] = norm;
    if (!(std::isfinite(norm) && norm > 0.0f)) continue;
    float* to = dst + out * dim;
    for (size_t i = 0; i < dim; ++i) to[i] = row[i] / norm;
    ++out;
  }
  return out;
}

}  // namespace chitta::util
