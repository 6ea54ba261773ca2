// _ext/bind_dense_scan.cc
//   _core._DenseQuant(dim): the int8 form of the dense lane's unit rows (csrc/recall/word_scan.h)
//     .size; .append(rows f32[m, dim]); .set(rows i64[m], vectors f32[m, dim])
//   _core._dense_top_k(quant or None, matrix f32[N, dim], n, ids u64[>= n], q f32[dim], k,
//                      skip i64[s]) -> (ids u64[h], cosines f32[h])
// The exact scan of the matrix's first n rows (csrc/recall/dense_scan.h): best first, ties
// by the smaller id, the rows in `skip` (free rows) never returned; with a quant (which
// must hold at least those n rows) most rows are skipped by its first pass.
#include <pybind11/numpy.h>

#include <memory>
#include <vector>

#include "bind_util.h"
#include "hnsw/distance.h"
#include "recall/dense_scan.h"
#include "registry.h"

namespace chitta_ext {
namespace {

namespace rc = chitta::recall;

struct PyDenseQuant {
  explicit PyDenseQuant(size_t dim) : quant(dim) {
    if (dim == 0) ThrowInvalid("dim must be >= 1");
  }
  rc::QuantRows quant;
};

void Append(PyDenseQuant& self, const py::array& rows_in) {
  auto rows = Expect<float>(rows_in, 2, "rows");
  if (static_cast<size_t>(rows.shape(1)) != self.quant.dim) ThrowInvalid("rows must have the quant's width");
  const float* src = rows.data();
  const size_t m = static_cast<size_t>(rows.shape(0));
  py::gil_scoped_release release;
  self.quant.Append(src, m);
}

void Set(PyDenseQuant& self, const py::array& at_in, const py::array& vecs_in) {
  auto at = Expect<int64_t>(at_in, 1, "rows");
  auto vecs = Expect<float>(vecs_in, 2, "vectors");
  const size_t m = static_cast<size_t>(at.shape(0)), dim = self.quant.dim;
  if (static_cast<size_t>(vecs.shape(0)) != m || static_cast<size_t>(vecs.shape(1)) != dim) {
    ThrowInvalid("vectors must be one row of the quant's width per row index");
  }
  const int64_t* r = at.data();
  for (size_t i = 0; i < m; ++i) {
    if (r[i] < 0 || static_cast<size_t>(r[i]) >= self.quant.size()) ThrowInvalid("row index out of range");
  }
  const float* v = vecs.data();
  py::gil_scoped_release release;
  for (size_t i = 0; i < m; ++i) self.quant.Set(static_cast<size_t>(r[i]), v + i * dim);
}

py::tuple TopK(const py::object& quant_in, const py::array& matrix_in, size_t n, const py::array& ids_in,
               const py::array& q_in, size_t k, const py::array& skip_in) {
  auto matrix = Expect<float>(matrix_in, 2, "matrix");
  auto ids = Expect<uint64_t>(ids_in, 1, "ids");
  auto q = Expect<float>(q_in, 1, "query");
  auto skip = Expect<int64_t>(skip_in, 1, "skip");
  const size_t dim = static_cast<size_t>(matrix.shape(1));
  if (n > static_cast<size_t>(matrix.shape(0))) ThrowInvalid("n is past the matrix's rows");
  if (n > static_cast<size_t>(ids.shape(0))) ThrowInvalid("n is past the ids");
  if (static_cast<size_t>(q.shape(0)) != dim) ThrowInvalid("the query must have the matrix's width");
  const rc::QuantRows* quant = nullptr;
  if (!quant_in.is_none()) {
    quant = &quant_in.cast<PyDenseQuant&>().quant;
    if (quant->dim != dim) ThrowInvalid("the quant and the matrix must have the same width");
    if (quant->size() < n) ThrowInvalid("the quant holds fewer rows than n");
  }
  std::vector<rc::DenseHit> hits;
  {
    py::gil_scoped_release release;
    rc::DenseExactTopK(quant, matrix.data(), ids.data(), n, dim, chitta::hnsw::ChosenDot(), q.data(), k,
                       skip.data(), static_cast<size_t>(skip.shape(0)), &hits);
  }
  py::array_t<uint64_t> out_ids(static_cast<py::ssize_t>(hits.size()));
  py::array_t<float> out_cos(static_cast<py::ssize_t>(hits.size()));
  uint64_t* oi = out_ids.mutable_data();
  float* oc = out_cos.mutable_data();
  for (size_t i = 0; i < hits.size(); ++i) {
    oi[i] = hits[i].id;
    oc[i] = hits[i].cosine;
  }
  return py::make_tuple(out_ids, out_cos);
}

}  // namespace

CHITTA_BIND(dense_scan) {
  py::class_<PyDenseQuant>(m, "_DenseQuant")
      .def(py::init<size_t>(), py::arg("dim"))
      .def_property_readonly("size", [](const PyDenseQuant& self) { return self.quant.size(); })
      .def("append", &Append, py::arg("rows"))
      .def("set", &Set, py::arg("rows"), py::arg("vectors"));
  m.def("_dense_top_k", &TopK, py::arg("quant"), py::arg("matrix"), py::arg("n"), py::arg("ids"),
        py::arg("query"), py::arg("k"), py::arg("skip"));
}

}  // namespace chitta_ext
