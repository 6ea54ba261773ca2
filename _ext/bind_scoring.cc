// _ext/bind_scoring.cc
// chitta._core binding of the recall scorer's batch arithmetic
// (csrc/scoring/score.h). chitta/recall/scorer.py builds the columns.
#include <pybind11/numpy.h>

#include <string>

#include "registry.h"
#include "scoring/score.h"

namespace chitta_ext {

namespace {

template <typename T>
using Arr = py::array_t<T, py::array::c_style | py::array::forcecast>;

template <typename T>
const T* Column(const Arr<T>& a, size_t n, const char* name) {
  if (a.ndim() != 1 || static_cast<size_t>(a.shape(0)) != n) {
    ThrowInvalid(std::string(name) + " must be 1-D with one value per candidate");
  }
  return a.data();
}

}  // namespace

CHITTA_BIND(scoring) {
  m.def(
      "_score_candidates",
      [](const Arr<double>& fused, const Arr<double>& cosine, const Arr<int64_t>& created_ms,
         const Arr<int64_t>& access_offsets, const Arr<int64_t>& access_ms, const Arr<double>& confidence,
         const Arr<double>& strength, const Arr<uint8_t>& staged, const Arr<int64_t>& tier,
         const Arr<double>& kind_weight, const Arr<double>& suppressed, double best_fused, int64_t now_ms,
         const py::tuple& weights) {
        if (fused.ndim() != 1) ThrowInvalid("fused must be 1-D");
        const auto n = static_cast<size_t>(fused.shape(0));
        if (access_offsets.ndim() != 1 || static_cast<size_t>(access_offsets.shape(0)) != n + 1) {
          ThrowInvalid("access_offsets must hold one more value than there are candidates");
        }
        if (access_ms.ndim() != 1) ThrowInvalid("access_ms must be 1-D");
        if (py::len(weights) != 8) ThrowInvalid("weights must be a tuple of 8 floats");
        chitta::scoring::Weights w;
        double* fields[] = {&w.w_fused,        &w.w_similarity, &w.w_activation,      &w.w_freshness,
                            &w.freshness_rate, &w.actr_decay,   &w.staged_multiplier, &w.tier_step};
        for (size_t i = 0; i < 8; ++i) *fields[i] = weights[i].cast<double>();
        chitta::scoring::Candidates c;
        c.n = n;
        c.fused = fused.data();
        c.cosine = Column(cosine, n, "cosine");
        c.created_ms = Column(created_ms, n, "created_ms");
        c.access_offsets = access_offsets.data();
        c.access_ms = access_ms.data();
        c.access_len = static_cast<size_t>(access_ms.shape(0));
        c.confidence = Column(confidence, n, "confidence");
        c.strength = Column(strength, n, "strength");
        c.staged = Column(staged, n, "staged");
        c.tier = Column(tier, n, "tier");
        c.kind_weight = Column(kind_weight, n, "kind_weight");
        c.suppressed = Column(suppressed, n, "suppressed");
        py::array_t<double> out(static_cast<py::ssize_t>(n));
        ThrowIfError(chitta::scoring::ScoreCandidates(c, best_fused, now_ms, w, out.mutable_data()));
        return out;
      },
      py::arg("fused"), py::arg("cosine"), py::arg("created_ms"), py::arg("access_offsets"),
      py::arg("access_ms"), py::arg("confidence"), py::arg("strength"), py::arg("staged"), py::arg("tier"),
      py::arg("kind_weight"), py::arg("suppressed"), py::arg("best_fused"), py::arg("now_ms"),
      py::arg("weights"), "Scores of a batch of recall candidates (see chitta.recall.scorer).");
}

}  // namespace chitta_ext
