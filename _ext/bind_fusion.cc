// _ext/bind_fusion.cc
// chitta._core binding of weighted reciprocal rank fusion (csrc/fusion/rrf.h).
// chitta/organs/index/fusion.py converts and validates the inputs first.
#include <pybind11/numpy.h>

#include <string>
#include <vector>

#include "fusion/rrf.h"
#include "registry.h"

namespace chitta_ext {

CHITTA_BIND(fusion) {
  m.def(
      "_rrf_fuse",
      [](const py::list& lists, const py::object& weights, double k, int64_t limit,
         bool return_ranks) {
        if (limit < 0) ThrowInvalid("limit must be >= 0");
        std::vector<py::array_t<uint64_t>> arrays;
        std::vector<chitta::fusion::RankedList> ranked;
        arrays.reserve(py::len(lists));
        for (const auto& item : lists) {
          if (!py::isinstance<py::array_t<uint64_t>>(item)) {
            ThrowInvalid("each ranked list must be a numpy uint64 array");
          }
          auto arr = py::reinterpret_borrow<py::array_t<uint64_t>>(item);
          if (arr.ndim() != 1 || !(arr.flags() & py::array::c_style)) {
            ThrowInvalid("each ranked list must be 1-D and contiguous");
          }
          arrays.push_back(arr);
          ranked.push_back({arr.data(), static_cast<size_t>(arr.shape(0))});
        }
        std::vector<double> w;
        if (!weights.is_none()) {
          if (!py::isinstance<py::array_t<double>>(weights)) {
            ThrowInvalid("weights must be a numpy float64 array");
          }
          auto warr = py::reinterpret_borrow<py::array_t<double>>(weights);
          if (warr.ndim() != 1) ThrowInvalid("weights must be 1-D");
          for (py::ssize_t i = 0; i < warr.shape(0); ++i) w.push_back(warr.at(i));
        }
        chitta::fusion::FusedResult result;
        chitta::Status st;
        {
          py::gil_scoped_release release;
          st = chitta::fusion::RrfFuse(ranked, w, k, static_cast<size_t>(limit), return_ranks,
                                       &result);
        }
        ThrowIfError(std::move(st));
        const auto m_out = static_cast<py::ssize_t>(result.ids.size());
        py::array_t<uint64_t> ids(m_out);
        py::array_t<double> scores(m_out);
        std::copy(result.ids.begin(), result.ids.end(), ids.mutable_data());
        std::copy(result.scores.begin(), result.scores.end(), scores.mutable_data());
        py::object ranks = py::none();
        if (return_ranks) {
          const auto n_lists = static_cast<py::ssize_t>(ranked.size());
          py::array_t<int32_t> r({m_out, n_lists});
          std::copy(result.ranks.begin(), result.ranks.end(), r.mutable_data());
          ranks = r;
        }
        return py::make_tuple(ids, scores, ranks);
      },
      py::arg("lists"), py::arg("weights"), py::arg("k"), py::arg("limit"),
      py::arg("return_ranks"), "Weighted reciprocal rank fusion (see chitta.organs.index.fusion).");
}

}  // namespace chitta_ext
