// csrc/hamming/scan.h
// Hamming distance kernels over a flat array of binary codes, and the run-time
// choice between them. A code is `words` little-endian u64 words; code i of an
// array starts at codes + i * words. The distance of two codes is the popcount
// of their XOR (0..64*words).
//
// Each kernel computes the distance of every code in a block to one query and
// keeps only those strictly below a threshold. Distances are integers, so all
// kernels agree bit for bit; scan_generic.cc is the reference and scan_test.cc
// checks the others against it. dispatch.cc picks one kernel once per process
// through util/cpu.h (cap: env CHITTA_SIMD, see there; ForceSimdLevel in tests).
#pragma once

#include <cstddef>
#include <cstdint>

#include "chitta/status.h"
#include "util/cpu.h"

namespace chitta::hamming {

// Largest block a kernel is handed at once; out arrays must hold this many.
constexpr size_t kMaxBlock = 1024;

// For codes[0..n) (n <= kMaxBlock): if d(query, code i) < threshold, appends
// i to out_index and d to out_dist, in increasing i. Returns how many were
// appended. threshold == UINT32_MAX keeps every code whose distance fits.
using FilterFn = size_t (*)(const uint64_t* query, const uint64_t* codes, size_t n, size_t words,
                            uint32_t threshold, uint32_t* out_index, uint32_t* out_dist);

size_t FilterGeneric(const uint64_t* query, const uint64_t* codes, size_t n, size_t words,
                     uint32_t threshold, uint32_t* out_index, uint32_t* out_dist);
// The features scan_avx2.cc / scan_avx512.cc are built with (CMakeLists.txt;
// each file static_asserts it) and so need at run time.
inline constexpr uint32_t kAvx2Features = cpu::kAvx2Base;  // -mavx2 -mpopcnt
inline constexpr uint32_t kAvx512Features =  // -mavx512f -mavx512bw -mavx512vl -mavx512vpopcntdq -mpopcnt
    cpu::kAvx512Base | cpu::kAvx512bw | cpu::kAvx512vl | cpu::kAvx512vpopcntdq;
// Only call these when CpuSupports says so.
size_t FilterAvx2(const uint64_t* query, const uint64_t* codes, size_t n, size_t words,
                  uint32_t threshold, uint32_t* out_index, uint32_t* out_dist);
size_t FilterAvx512(const uint64_t* query, const uint64_t* codes, size_t n, size_t words,
                    uint32_t threshold, uint32_t* out_index, uint32_t* out_dist);

enum class SimdLevel : int { kGeneric = 0, kAvx2 = 1, kAvx512 = 2 };

// "generic", "avx2" or "avx512_vpopcntdq".
const char* SimdLevelName(SimdLevel level);
// Whether this CPU (and OS) can run the kernel of `level`.
bool CpuSupports(SimdLevel level);
// Best level this CPU supports, ignoring overrides.
SimdLevel DetectedSimdLevel();
// The best level this CPU runs at or below cpu level `cap`.
SimdLevel LevelFor(cpu::Level cap);
// The level in use: the best CpuSupports allows under CHITTA_SIMD's cap (first
// use), or the one ForceSimdLevel set.
SimdLevel ActiveSimdLevel();
FilterFn ActiveFilter();
FilterFn FilterFor(SimdLevel level);  // no CPU check: callers check CpuSupports
// Test hook: use `level` from now on. Unsupported if the CPU lacks it.
[[nodiscard]] Status ForceSimdLevel(SimdLevel level);
// Parses "generic", "avx2", "avx512" / "avx512_vpopcntdq"; false if unknown.
bool ParseSimdLevel(const char* text, SimdLevel* level);

// Reads n bytes once and folds them into a value (so the read is not elided).
// The benchmark's single-thread memory-bandwidth probe.
// Uses AVX2 loads when util/cpu.h allows the AVX2 tier.
uint64_t ReadBytes(const void* data, size_t n);
uint64_t ReadBytesGeneric(const void* data, size_t n);
uint64_t ReadBytesAvx2(const void* data, size_t n);  // needs AVX2

}  // namespace chitta::hamming
