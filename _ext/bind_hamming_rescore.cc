// _ext/bind_hamming_rescore.cc
// chitta._core bindings of the rescoring Hamming index. Converts, releases
// the GIL, maps Status; no logic.
#include <limits>
#include <memory>
#include <vector>

#include "hamming/rescore_index.h"
#include "hamming_arrays.h"

namespace chitta_ext {
namespace {

using chitta::hamming::RescoreIndex;
using hamming::Expect;
using hamming::ExpectRows;

size_t NonNegative(int64_t v, const char* what) {
  if (v < 0) ThrowInvalid(std::string(what) + " must not be negative");
  return static_cast<size_t>(v);
}

}  // namespace

CHITTA_BIND(hamming_rescore) {
  m.def("_hamming_default_candidates", &RescoreIndex::DefaultCandidates, py::arg("n"),
        "Default Hamming candidate count for n memories: max(400, ceil(n / 1000)).");

  py::class_<RescoreIndex>(m, "HammingRescoreIndex")
      .def(py::init([](int64_t dim, int64_t candidates, bool external_rows) {
             if (dim <= 0) ThrowInvalid("dim must be positive");
             auto r = RescoreIndex::Create(static_cast<size_t>(dim),
                                           NonNegative(candidates, "candidates"), external_rows);
             ThrowIfError(r.status());
             return std::move(r.value());
           }),
           py::arg("dim"), py::arg("candidates"), py::arg("external_rows") = false)
      .def_property_readonly("external_rows", &RescoreIndex::external_rows)
      .def("add_refs", [](RescoreIndex& self, const py::array& ids_in, const py::array& refs_in,
                          const py::array& codes_in) {
        auto ids = Expect<uint64_t>(ids_in, 1, "ids");
        auto refs = Expect<int64_t>(refs_in, 1, "rows");
        auto codes = Expect<uint64_t>(codes_in, 2, "codes");
        if (refs.shape(0) != ids.shape(0)) ThrowInvalid("rows must have one entry per id");
        ExpectRows(codes, ids.shape(0), static_cast<py::ssize_t>(self.words()), "codes");
        CallReleased([&] {
          return self.AddRefs(ids.data(), refs.data(), codes.data(), static_cast<size_t>(ids.shape(0)));
        });
      }, py::arg("ids"), py::arg("rows"), py::arg("codes"))
      .def_property_readonly("dim", &RescoreIndex::dim)
      .def_property_readonly("bits", &RescoreIndex::bits)
      .def_property_readonly("candidates_setting", &RescoreIndex::candidates_setting)
      .def("effective_candidates", &RescoreIndex::EffectiveCandidates)
      .def("__len__", &RescoreIndex::size)
      .def("contains", &RescoreIndex::Contains, py::arg("id"))
      .def("memory_bytes", &RescoreIndex::MemoryBytes)
      .def("set_mean", [](RescoreIndex& self, const py::array& mean_in) {
        auto mean = Expect<float>(mean_in, 1, "mean");
        if (static_cast<size_t>(mean.shape(0)) != self.dim()) ThrowInvalid("mean length must equal dim");
        ThrowIfError(self.SetMean(mean.data()));
      }, py::arg("mean"))
      .def("get_mean", [](const RescoreIndex& self) -> py::object {
        std::vector<float> mean;
        if (!self.GetMean(&mean)) return py::none();
        return ToArray(mean);
      })
      .def("add", [](RescoreIndex& self, const py::array& ids_in, const py::array& vectors_in) {
        auto ids = Expect<uint64_t>(ids_in, 1, "ids");
        auto vectors = Expect<float>(vectors_in, 2, "vectors");
        ExpectRows(vectors, ids.shape(0), static_cast<py::ssize_t>(self.dim()), "vectors");
        CallReleased([&] {
          return self.Add(ids.data(), vectors.data(), static_cast<size_t>(ids.shape(0)));
        });
      }, py::arg("ids"), py::arg("vectors"))
      .def("add_coded", [](RescoreIndex& self, const py::array& ids_in, const py::array& rows_in,
                           const py::array& codes_in) {
        auto ids = Expect<uint64_t>(ids_in, 1, "ids");
        auto rows = Expect<float>(rows_in, 2, "vectors");
        auto codes = Expect<uint64_t>(codes_in, 2, "codes");
        ExpectRows(rows, ids.shape(0), static_cast<py::ssize_t>(self.dim()), "vectors");
        ExpectRows(codes, ids.shape(0), static_cast<py::ssize_t>(self.words()), "codes");
        CallReleased([&] {
          return self.AddCoded(ids.data(), rows.data(), codes.data(),
                               static_cast<size_t>(ids.shape(0)));
        });
      }, py::arg("ids"), py::arg("vectors"), py::arg("codes"))
      .def("remove", [](RescoreIndex& self, const py::array& ids_in) {
        auto ids = Expect<uint64_t>(ids_in, 1, "ids");
        CallReleased([&] { return self.Remove(ids.data(), static_cast<size_t>(ids.shape(0))); });
      }, py::arg("ids"))
      .def("search", [](const RescoreIndex& self, const py::array& queries_in, int64_t k,
                        int64_t candidates, const py::object& matrix_in) {
        auto queries = Expect<float>(queries_in, 2, "queries");
        py::array_t<float> matrix;
        if (!matrix_in.is_none()) {
          if (!py::isinstance<py::array>(matrix_in)) ThrowInvalid("matrix must be a float32 array");
          matrix = Expect<float>(py::reinterpret_borrow<py::array>(matrix_in), 2, "matrix");
          if (static_cast<size_t>(matrix.shape(1)) != self.dim()) ThrowInvalid("matrix width must equal dim");
        }
        const float* mat = matrix_in.is_none() ? nullptr : matrix.data();
        const size_t mat_rows = matrix_in.is_none() ? 0 : static_cast<size_t>(matrix.shape(0));
        if (k <= 0) ThrowInvalid("k must be positive");
        const size_t c = NonNegative(candidates, "candidates");
        ExpectRows(queries, queries.shape(0), static_cast<py::ssize_t>(self.dim()), "queries");
        const auto nq = queries.shape(0);
        py::array_t<uint64_t> ids({nq, static_cast<py::ssize_t>(k)});
        py::array_t<float> scores({nq, static_cast<py::ssize_t>(k)});
        CallReleased([&] {
          return self.Search(queries.data(), static_cast<size_t>(nq), static_cast<size_t>(k), c,
                             ids.mutable_data(), scores.mutable_data(), mat, mat_rows);
        });
        return py::make_tuple(ids, scores);
      }, py::arg("queries"), py::arg("k"), py::arg("candidates"), py::arg("matrix") = py::none())
      .def("candidate_ids", [](const RescoreIndex& self, const py::array& query_in,
                               int64_t candidates) {
        auto query = Expect<float>(query_in, 1, "query");
        if (static_cast<size_t>(query.shape(0)) != self.dim()) ThrowInvalid("query length must equal dim");
        std::vector<uint64_t> out;
        ThrowIfError(self.CandidateIds(query.data(), NonNegative(candidates, "candidates"), &out));
        return ToArray(out);
      }, py::arg("query"), py::arg("candidates"));
}

}  // namespace chitta_ext
