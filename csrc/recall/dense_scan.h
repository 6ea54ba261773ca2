// csrc/recall/dense_scan.h
// The dense lane's exact scan (chitta/organs/recall_index_dense.py): the k
// unit rows nearest a unit query by f32 dot product, with the word scan's
// quantized first pass (word_scan.h) to skip the rows that cannot be among
// them. The answer is what one f32 dot per row (hnsw/distance.h's kernel)
// and a sort by cosine descending, then id ascending, give: the same rows,
// order and values (dense_scan_test.cc checks it against that scan).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hnsw/distance.h"
#include "recall/word_scan.h"

namespace chitta::recall {

struct DenseHit {
  uint64_t id;
  float cosine;
};

// Rows row-major n * dim, ids[r] the id of row r; rows listed in `skip`
// (n_skip indexes: free rows) are never returned. `quant` holds the same n
// rows' codes, or is null: every row is then scored in f32 (small tables).
void DenseExactTopK(const QuantRows* quant, const float* rows, const uint64_t* ids, size_t n,
                    size_t dim, hnsw::DotFn dot, const float* q, size_t k, const int64_t* skip,
                    size_t n_skip, std::vector<DenseHit>* out);

}  // namespace chitta::recall
