// csrc/scoring/convex.h
// Convex score fusion of the recall tail's kept candidates, bit for bit
// chitta.recall.convex.convex_from_ranks (the reference; its module docstring
// has the formula):
//
//   fused = alpha * bm25 / max bm25 + (1 - alpha) * minmax(cos)
//           [+ beta * bm25_expansion / max bm25_expansion]
//
// Same float64 operations in the same order (this directory is built with
// -ffp-contract=off: no fused multiply-add). convex_test.cc checks it by hand,
// tests/unit/recall/test_recall_convex_native.py
// compares the two on random inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chitta::scoring {

// One lane's BM25 scores (its ranked list's, best first) and where its ranks
// sit in the gathered rank matrix. column < 0 or weight <= 0: no term.
struct ConvexLane {
  int64_t column = -1;
  const float* scores = nullptr;
  size_t n = 0;
  double weight = 0.0;  // alpha for the keyword lane, beta for the expansion lane
};

// ranks: [rows x lists] 1-based lane ranks (0: absent), row-major; keep: the
// rows scored, in order (n_keep of them); cosine: one per kept row, NaN = no
// vector, or null (no cosine term). alpha = keyword.weight even when the
// keyword lane has no column (the cosine term still takes 1 - alpha).
void ConvexFused(const int32_t* ranks, size_t lists, const uint32_t* keep, size_t n_keep,
                 const double* cosine, const ConvexLane& keyword, const ConvexLane& expansion,
                 std::vector<double>* out);

}  // namespace chitta::scoring
