// csrc/hnsw/distance.cc
// Run-time kernel choice, metric names and input-vector checks.
#include "hnsw/distance.h"

#include <cmath>
#include <cstring>
#include <string>

namespace chitta::hnsw {

bool HasAvx2Fma() { return cpu::Supports(kDotAvx2Features); }
bool HasAvx512() { return cpu::Supports(kDotAvx512Features); }

DotFn DotFor(cpu::Level cap) {
  const int c = static_cast<int>(cap);
  if (c >= static_cast<int>(cpu::Level::kAvx512) && HasAvx512()) return &DotAvx512;
  if (c >= static_cast<int>(cpu::Level::kAvx2) && HasAvx2Fma()) return &DotAvx2;
  return &DotGeneric;
}

DotFn ChosenDot() {
  static const DotFn fn = DotFor(cpu::Cap());
  return fn;
}

const char* DotName(DotFn fn) {
  return fn == &DotAvx512 ? "avx512" : fn == &DotAvx2 ? "avx2" : "generic";
}

const char* DistanceImplementation() { return DotName(ChosenDot()); }

const char* MetricName(Metric metric) {
  return metric == Metric::kCosine ? "cosine" : "ip";
}

Status ParseMetric(const char* name, Metric* out) {
  if (std::strcmp(name, "cosine") == 0) {
    *out = Metric::kCosine;
  } else if (std::strcmp(name, "ip") == 0) {
    *out = Metric::kInnerProduct;
  } else {
    return Status::InvalidArgument(std::string("unknown metric '") + name +
                                   "' (expected 'cosine' or 'ip')");
  }
  return Status::OK();
}

namespace {

// Sum of squares in double (cannot overflow for finite floats); -1 if a value
// is NaN or infinite.
double NormSquaredOrNegative(const float* v, size_t dim) {
  double s = 0.0;
  for (size_t i = 0; i < dim; ++i) {
    if (!std::isfinite(v[i])) return -1.0;
    s += static_cast<double>(v[i]) * v[i];
  }
  return s;
}

Status CheckOne(Metric metric, const float* v, size_t dim, double* norm2, size_t row) {
  *norm2 = NormSquaredOrNegative(v, dim);
  if (*norm2 < 0) {
    return Status::InvalidArgument("vector " + std::to_string(row) + " has a NaN or infinite value");
  }
  if (metric == Metric::kCosine && !(*norm2 > 0.0)) {
    return Status::InvalidArgument("vector " + std::to_string(row) +
                                   " is zero; cosine needs a non-zero vector");
  }
  return Status::OK();
}

}  // namespace

Status PrepareVector(Metric metric, const float* in, size_t dim, float* out) {
  double norm2 = 0.0;
  CHITTA_RETURN_IF_ERROR(CheckOne(metric, in, dim, &norm2, 0));
  if (metric == Metric::kCosine) {
    const double inv = 1.0 / std::sqrt(norm2);
    for (size_t i = 0; i < dim; ++i) out[i] = static_cast<float>(in[i] * inv);
  } else if (out != in) {
    std::memcpy(out, in, dim * sizeof(float));
  }
  return Status::OK();
}

Status CheckVectors(Metric metric, const float* rows, size_t n, size_t dim) {
  for (size_t r = 0; r < n; ++r) {
    double norm2 = 0.0;
    CHITTA_RETURN_IF_ERROR(CheckOne(metric, rows + r * dim, dim, &norm2, r));
  }
  return Status::OK();
}

}  // namespace chitta::hnsw
