// csrc/scoring/convex.cc
// ConvexFused (convex.h): chitta.recall.convex.convex_from_ranks in native
// code, operation for operation.
#include "scoring/convex.h"

#include <algorithm>
#include <cmath>

namespace chitta::scoring {
namespace {

// out[j] (+)= (weight / max score) * score[rank - 1] for kept rows whose rank
// in `lane` is within its list; `add` false: assigns (the keyword term onto
// zeros), true: adds (the expansion term).
void LaneTerm(const int32_t* ranks, size_t lists, const uint32_t* keep, size_t n_keep,
              const ConvexLane& lane, bool add, std::vector<double>* out) {
  if (lane.n == 0 || lane.column < 0 || static_cast<size_t>(lane.column) >= lists) return;
  double top = static_cast<double>(lane.scores[0]);
  for (size_t i = 1; i < lane.n; ++i) top = std::max(top, static_cast<double>(lane.scores[i]));
  if (!(top > 0.0)) return;
  const double c = lane.weight / top;
  for (size_t j = 0; j < n_keep; ++j) {
    const int64_t rank = ranks[static_cast<size_t>(keep[j]) * lists + static_cast<size_t>(lane.column)];
    if (rank > 0 && static_cast<size_t>(rank) <= lane.n) {
      const double term = c * static_cast<double>(lane.scores[rank - 1]);
      (*out)[j] = add ? (*out)[j] + term : term;
    }
  }
}

}  // namespace

void ConvexFused(const int32_t* ranks, size_t lists, const uint32_t* keep, size_t n_keep,
                 const double* cosine, const ConvexLane& keyword, const ConvexLane& expansion,
                 std::vector<double>* out) {
  out->assign(n_keep, 0.0);
  if (n_keep == 0) return;
  const double alpha = keyword.weight;
  if (alpha > 0) LaneTerm(ranks, lists, keep, n_keep, keyword, false, out);
  if (alpha < 1 && cosine != nullptr) {
    double lo = 0.0, hi = 0.0;
    bool any = false;
    for (size_t j = 0; j < n_keep; ++j) {
      const double c = cosine[j];
      if (std::isnan(c)) continue;
      lo = any ? std::min(lo, c) : c;
      hi = any ? std::max(hi, c) : c;
      any = true;
    }
    if (any) {
      const double w = 1.0 - alpha;
      const double span = hi - lo;
      for (size_t j = 0; j < n_keep; ++j) {
        const double c = cosine[j];
        if (std::isnan(c)) continue;
        (*out)[j] = (*out)[j] + (hi > lo ? w * ((c - lo) / span) : w * 1.0);
      }
    }
  }
  if (expansion.weight > 0) LaneTerm(ranks, lists, keep, n_keep, expansion, true, out);
}

}  // namespace chitta::scoring
