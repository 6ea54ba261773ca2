// csrc/hnsw/distance.h
// Dot-product kernels behind both HNSW metrics. "cosine" stores and queries
// unit vectors, "ip" raw ones; in both the distance is 1 - dot(a, b), so one
// kernel serves both. DotGeneric is the reference; DotAvx512 (distance_avx512.cc)
// or DotAvx2 (distance_avx2.cc) is chosen once at run time when util/cpu.h
// allows it (CPU features, env CHITTA_SIMD's cap). The kernels differ in
// summation order, so they agree within float rounding, and bit for bit only
// where every partial sum is exact (distance_test.cc checks both).
#pragma once

#include <cstddef>
#include <cstdint>

#include "chitta/status.h"
#include "util/cpu.h"

namespace chitta::hnsw {

enum class Metric : uint8_t { kCosine = 0, kInnerProduct = 1 };

using DotFn = float (*)(const float* a, const float* b, size_t dim);

float DotGeneric(const float* a, const float* b, size_t dim);
float DotAvx2(const float* a, const float* b, size_t dim);  // needs HasAvx2Fma()
float DotAvx512(const float* a, const float* b, size_t dim);  // needs HasAvx512()
// The features distance_avx2.cc / distance_avx512.cc are built with
// (CMakeLists.txt; each file static_asserts it) and so need at run time.
inline constexpr uint32_t kDotAvx2Features = cpu::kAvx2Base | cpu::kFma;  // -mavx2 -mpopcnt -mfma
inline constexpr uint32_t kDotAvx512Features = cpu::kAvx512Base;          // -mavx512f -mpopcnt
bool HasAvx2Fma();  // the CPU can run DotAvx2 (ignores CHITTA_SIMD)
bool HasAvx512();   // the CPU can run DotAvx512 (ignores CHITTA_SIMD)

// The best kernel this CPU runs at or below level `cap`.
DotFn DotFor(cpu::Level cap);
// DotFor(cpu::Cap()), fixed after the first call.
DotFn ChosenDot();
const char* DotName(DotFn fn);          // "avx512", "avx2" or "generic"
const char* DistanceImplementation();   // DotName(ChosenDot())

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
