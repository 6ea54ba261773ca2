// csrc/hnsw/distance.h
// Dot-product kernels behind both HNSW metrics. "cosine" stores and queries
// unit vectors, "ip" raw ones; in both the distance is 1 - dot(a, b), so one
// kernel serves both. DotGeneric is the reference; DotAvx512 (distance_avx512.cc)
// or DotAvx2 (distance_avx2.cc, -mavx2 -mfma) is chosen once at run time when
// the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chitta/status.h"

namespace chitta::hnsw {

enum class Metric : uint8_t { kCosine = 0, kInnerProduct = 1 };

using DotFn = float (*)(const float* a, const float* b, size_t dim);

float DotGeneric(const float* a, const float* b, size_t dim);
float DotAvx2(const float* a, const float* b, size_t dim);  // needs HasAvx2Fma()
float DotAvx512(const float* a, const float* b, size_t dim);  // needs HasAvx512()
bool HasAvx2Fma();
bool HasAvx512();

// The kernel picked for this CPU (fixed after the first call).
DotFn ChosenDot();
const char* DistanceImplementation();  // "avx512", "avx2" or "generic"

inline float Distance(DotFn dot, const float* a, const float* b, size_t dim) {
  return 1.0f - dot(a, b, dim);
}

const char* MetricName(Metric metric);
[[nodiscard]] Status ParseMetric(const char* name, Metric* out);

// Checks one input vector (every value finite; for cosine a non-zero, finite
// norm) and writes the vector as stored: normalised for cosine, copied for ip.
// `out` may alias `in`. On error nothing is written.
[[nodiscard]] Status PrepareVector(Metric metric, const float* in, size_t dim, float* out);

// Checks a batch of n row vectors without writing anything; the message names
// the first bad row.
[[nodiscard]] Status CheckVectors(Metric metric, const float* rows, size_t n, size_t dim);

}  // namespace chitta::hnsw
