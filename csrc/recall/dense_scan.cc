// csrc/recall/dense_scan.cc
// The dense lane's exact top k (dense_scan.h).
#include "recall/dense_scan.h"

#include <algorithm>
#include <limits>

namespace chitta::recall {
namespace {

// a ranks before b: higher cosine, then the smaller id.
bool Better(const DenseHit& a, const DenseHit& b) {
  return a.cosine > b.cosine || (a.cosine == b.cosine && a.id < b.id);
}

}  // namespace

void DenseExactTopK(const QuantRows* quant, const float* rows, const uint64_t* ids, size_t n,
                    size_t dim, hnsw::DotFn dot, const float* q, size_t k, const int64_t* skip,
                    size_t n_skip, std::vector<DenseHit>* out) {
  out->clear();
  k = std::min(k, n);
  if (k == 0) return;
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  std::vector<float> upper;
  float floor = kNone;
  if (quant != nullptr) {
    floor = FirstPass(*quant, n, q, k, skip, n_skip, &upper);
  } else {
    upper.assign(n, 0.0f);
    for (size_t i = 0; i < n_skip; ++i) {
      if (skip[i] >= 0 && static_cast<size_t>(skip[i]) < n) upper[skip[i]] = kNone;
    }
  }
  out->reserve(k);
  BestK<DenseHit, Better> best{k, out};
  for (size_t r = 0; r < n; ++r) {
    if (upper[r] == kNone || upper[r] < floor) continue;
    best.Offer({ids[r], dot(q, rows + r * dim, dim)});
  }
  best.Finish();
}

}  // namespace chitta::recall
