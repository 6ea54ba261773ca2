// _ext/bind_word_index.cc
// chitta._core._WordIndex and _WordSearch (csrc/recall/word_index.h): the
// expansion lane's word search. Results come back as Python lists (a handful
// of rows), the GIL released while searching, adding or waiting.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bind_util.h"
#include "recall/word_index.h"

namespace chitta_ext {
namespace {

namespace rc = chitta::recall;

// float32[dim] (or [1, dim]) -> its data, else InvalidArgument.
const float* QueryOf(const py::array& query, size_t dim) {
  if (!query.dtype().is(py::dtype::of<float>())) {
    ThrowInvalid("query must have dtype float32, got " + std::string(py::str(query.dtype())));
  }
  if (!(query.flags() & py::array::c_style) || static_cast<size_t>(query.size()) != dim ||
      query.ndim() > 2) {
    ThrowInvalid("query must be a C-contiguous float32 vector of " + std::to_string(dim) +
                 " values");
  }
  return static_cast<const float*>(query.data());
}

size_t WantOf(int64_t want) {
  if (want < 1) ThrowInvalid("want must be >= 1, got " + std::to_string(want));
  return static_cast<size_t>(want);
}

py::tuple Lists(const std::vector<rc::WordHit>& hits) {
  py::list rows(hits.size());
  py::list cos(hits.size());
  for (size_t i = 0; i < hits.size(); ++i) {
    rows[i] = py::int_(hits[i].row);
    cos[i] = py::float_(hits[i].cosine);
  }
  return py::make_tuple(rows, cos);
}

rc::WordIndexOptions OptionsOf(uint32_t dim, size_t exact_limit, size_t ef, bool graph_now) {
  rc::WordIndexOptions o;
  o.dim = dim;
  o.exact_limit = exact_limit;
  o.ef = ef;
  o.graph_now = graph_now;
  return o;
}

std::unique_ptr<rc::WordIndex> Make(uint32_t dim, size_t exact_limit, size_t ef, bool graph_now) {
  auto r = rc::WordIndex::Create(OptionsOf(dim, exact_limit, ef, graph_now));
  ThrowIfError(r.status());
  return std::move(r.value());
}

}  // namespace

CHITTA_BIND(word_index) {
  py::class_<rc::WordSearch, std::shared_ptr<rc::WordSearch>>(m, "_WordSearch")
      .def("wait", [](rc::WordSearch& s) {
        CallReleased([&] { return s.Wait(); });
        return Lists(s.hits());
      })
      .def_property_readonly("done", &rc::WordSearch::done)
      .def_property_readonly("ran_on_worker", &rc::WordSearch::ran_on_worker);

  py::class_<rc::WordIndex>(m, "_WordIndex")
      .def(py::init(&Make), py::arg("dim"), py::arg("exact_limit"), py::arg("ef"),
           py::arg("graph_now") = false)
      .def_static("load_graph", [](uint32_t dim, size_t exact_limit, size_t ef, const py::array& rows,
                                   const std::string& path) {
        auto a = Expect<float>(rows, 2, "rows");
        if (static_cast<size_t>(a.shape(1)) != dim) {
          ThrowInvalid("rows must have " + std::to_string(dim) + " columns, got " +
                       std::to_string(a.shape(1)));
        }
        const float* p = a.data();
        const size_t n = static_cast<size_t>(a.shape(0));
        const rc::WordIndexOptions o = OptionsOf(dim, exact_limit, ef, false);
        return ValueReleased([&] { return rc::WordIndex::LoadGraph(o, p, n, path); });
      }, py::arg("dim"), py::arg("exact_limit"), py::arg("ef"), py::arg("rows"), py::arg("path"))
      .def("save_graph", [](const rc::WordIndex& w, const std::string& path) {
        return ValueReleased([&] { return w.SaveGraph(path); });
      }, py::arg("path"))
      .def("add", [](rc::WordIndex& w, const py::array& rows) {
        auto a = Expect<float>(rows, 2, "rows");
        if (static_cast<size_t>(a.shape(1)) != w.options().dim) {
          ThrowInvalid("rows must have " + std::to_string(w.options().dim) + " columns, got " +
                       std::to_string(a.shape(1)));
        }
        const float* p = a.data();
        const size_t n = static_cast<size_t>(a.shape(0));
        CallReleased([&] { return w.Add(p, n); });
      }, py::arg("rows"))
      .def("search", [](const rc::WordIndex& w, const py::array& query, int64_t want_in) {
        const float* q = QueryOf(query, w.options().dim);
        const size_t want = WantOf(want_in);
        std::vector<rc::WordHit> hits;
        CallReleased([&] { return w.Search(q, want, &hits); });
        return Lists(hits);
      }, py::arg("query"), py::arg("want"))
      .def("start", [](const rc::WordIndex& w, const py::array& query, int64_t want_in) {
        const float* q = QueryOf(query, w.options().dim);
        const size_t want = WantOf(want_in);
        return ValueReleased([&] { return w.Start(q, want); });
      }, py::arg("query"), py::arg("want"))
      .def("__len__", &rc::WordIndex::size)
      .def_property_readonly("has_graph", &rc::WordIndex::has_graph)
      .def_property_readonly("dim", [](const rc::WordIndex& w) { return w.options().dim; })
      .def_property_readonly("exact_limit",
                             [](const rc::WordIndex& w) { return w.options().exact_limit; })
      .def_property_readonly("ef", [](const rc::WordIndex& w) { return w.options().ef; });
}

}  // namespace chitta_ext
