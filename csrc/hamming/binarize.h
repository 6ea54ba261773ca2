// csrc/hamming/binarize.h
// Sign codes: bit i of a code (bit i%64 of word i/64) is 1 iff
// vector[i] - mean[i] > 0. Bits past dim are 0. Equals benchmarks/datagen.py
// sign_codes (numpy packbits, little-endian bit order).
#pragma once

#include <cstddef>
#include <cstdint>

#include "chitta/status.h"

namespace chitta::hamming {

inline size_t WordsForDim(size_t dim) { return (dim + 63) / 64; }

// InvalidArgument if any vector or mean value is NaN or infinite; nothing is
// written then. out: n x WordsForDim(dim).
[[nodiscard]] Status Binarize(const float* vectors, size_t n, size_t dim, const float* mean,
                              uint64_t* out);

// The same without the finiteness check (inputs already checked).
void BinarizeUnchecked(const float* vectors, size_t n, size_t dim, const float* mean,
                       uint64_t* out);

// Index of the first non-finite value in values[0..n), or n.
size_t FindNonFinite(const float* values, size_t n);

}  // namespace chitta::hamming
