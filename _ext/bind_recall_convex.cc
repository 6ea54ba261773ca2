// _ext/bind_recall_convex.cc
// chitta._core._recall_convex / _convex_fused: convex score fusion of the
// recall tail's kept candidates (csrc/scoring/convex.h), bit for bit
// chitta.recall.convex.convex_from_ranks. _recall_convex reads a gathered
// _RecallCandidates in place (chitta/recall/native_tail.py); _convex_fused
// takes the same inputs as arrays (tests compare it with the reference).
#include <pybind11/numpy.h>

#include <string>
#include <vector>

#include "bind_util.h"
#include "recall/candidates.h"
#include "scoring/convex.h"

namespace chitta_ext {
namespace {

namespace sc = chitta::scoring;

// A lane's scores: float32 1-D C-contiguous, or None (no term).
sc::ConvexLane LaneOf(int64_t column, const py::object& scores, double weight, const char* what) {
  sc::ConvexLane lane;
  lane.column = column;
  lane.weight = weight;
  if (scores.is_none()) return lane;
  auto a = Expect<float>(scores.cast<py::array>(), 1, what);
  lane.scores = a.data();
  lane.n = static_cast<size_t>(a.shape(0));
  return lane;
}

// One float64 per kept candidate, or None.
const double* CosineOf(const py::object& cosine, size_t n) {
  if (cosine.is_none()) return nullptr;
  auto a = Expect<double>(cosine.cast<py::array>(), 1, "cosine");
  if (static_cast<size_t>(a.shape(0)) != n) ThrowInvalid("cosine must hold one value per kept candidate");
  return a.data();
}

void CheckLanes(const sc::ConvexLane& kw, const sc::ConvexLane& ex, size_t lists) {
  for (const auto* lane : {&kw, &ex}) {
    if (lane->column >= static_cast<int64_t>(lists)) {
      ThrowInvalid("a lane column is past the rank matrix (" + std::to_string(lists) + " lists)");
    }
  }
}

py::array_t<double> Run(const int32_t* ranks, size_t lists, const uint32_t* keep, size_t n_keep,
                        const double* cosine, const sc::ConvexLane& kw, const sc::ConvexLane& ex) {
  std::vector<double> out;
  {
    py::gil_scoped_release release;
    sc::ConvexFused(ranks, lists, keep, n_keep, cosine, kw, ex, &out);
  }
  return ToArray(out);
}

}  // namespace

CHITTA_BIND(recall_convex) {
  m.def("_recall_convex", [](const chitta::recall::Gathered& g, const py::object& cosine, int64_t kw_col,
                             const py::object& kw_scores, double alpha, int64_t ex_col,
                             const py::object& ex_scores, double beta) {
    const size_t n = g.kept_ids.size();
    const sc::ConvexLane kw = LaneOf(kw_col, kw_scores, alpha, "keyword_scores");
    const sc::ConvexLane ex = LaneOf(ex_col, ex_scores, beta, "expansion_scores");
    CheckLanes(kw, ex, g.lists);
    const double* cos = CosineOf(cosine, n);
    if (cos == nullptr && g.cosine.size() == n) cos = g.cosine.data();  // the gathered cosines
    return Run(g.ranks.data(), g.lists, g.keep.data(), n, cos, kw, ex);
  }, py::arg("cands"), py::arg("cosine"), py::arg("keyword_column"), py::arg("keyword_scores"),
     py::arg("alpha"), py::arg("expansion_column"), py::arg("expansion_scores"), py::arg("beta"));

  m.def("_convex_fused", [](const py::array& ranks, const py::array& keep, const py::object& cosine,
                            int64_t kw_col, const py::object& kw_scores, double alpha, int64_t ex_col,
                            const py::object& ex_scores, double beta) {
    auto r = Expect<int32_t>(ranks, 2, "ranks");
    auto k = Expect<uint32_t>(keep, 1, "keep");
    const size_t rows = static_cast<size_t>(r.shape(0)), lists = static_cast<size_t>(r.shape(1));
    const size_t n = static_cast<size_t>(k.shape(0));
    for (size_t j = 0; j < n; ++j) {
      if (k.data()[j] >= rows) ThrowInvalid("keep holds a row past the rank matrix");
    }
    const sc::ConvexLane kw = LaneOf(kw_col, kw_scores, alpha, "keyword_scores");
    const sc::ConvexLane ex = LaneOf(ex_col, ex_scores, beta, "expansion_scores");
    CheckLanes(kw, ex, lists);
    return Run(r.data(), lists, k.data(), n, CosineOf(cosine, n), kw, ex);
  }, py::arg("ranks"), py::arg("keep"), py::arg("cosine"), py::arg("keyword_column"),
     py::arg("keyword_scores"), py::arg("alpha"), py::arg("expansion_column"),
     py::arg("expansion_scores"), py::arg("beta"));
}

}  // namespace chitta_ext
