// csrc/hamming/topk.h
// One-pass top-k selection by Hamming distance over a flat code array.
//
// The scan keeps a histogram of the distances of the candidates it has kept.
// Once k candidates are known, the k-th smallest distance D is a running
// threshold: a later code with distance >= D can never enter the result,
// because k codes with distance <= D and smaller slots already exist (ties go
// to the smaller slot). The kernel drops such codes before they leave the
// registers; survivors are appended and, when the list grows past a bound,
// cut back to exactly k. No sort of n; the final sort is over O(k) entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hamming/scan.h"

namespace chitta::hamming {

struct Neighbor {
  uint64_t slot;
  uint32_t dist;
};

// Orders by (dist, slot): the result order of every search.
inline bool NeighborLess(const Neighbor& a, const Neighbor& b) {
  return a.dist != b.dist ? a.dist < b.dist : a.slot < b.slot;
}

// Top-k of codes[0..n) (each `words` u64) nearest to `query`, skipping slots
// with dead[slot] != 0 (dead may be null). Writes min(k, live) neighbours to
// *out sorted by NeighborLess. `filter` is the kernel to use.
void TopK(FilterFn filter, const uint64_t* query, const uint64_t* codes, size_t n, size_t words,
          const uint8_t* dead, size_t k, std::vector<Neighbor>* out);

}  // namespace chitta::hamming
