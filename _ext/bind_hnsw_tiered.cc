// _ext/bind_hnsw_tiered.cc
// chitta._core._TieredHnswIndex. TieredIndex locks internally (searches run
// during merges); the GIL is released in every bulk call.
#include <memory>
#include <string>
#include <vector>

#include "hnsw/search_worker.h"
#include "hnsw/tiered.h"
#include "hnsw_arrays.h"

namespace chitta_ext {
namespace {

namespace hn = chitta::hnsw;
using namespace hnsw_arrays;  // NOLINT

std::unique_ptr<hn::TieredIndex> MakeTiered(uint32_t dim, uint32_t M, uint32_t efc,
                                            const std::string& metric, uint64_t seed,
                                            uint64_t threshold, double merge_ratio) {
  hn::TieredOptions o;
  o.graph.dim = dim;
  o.graph.M = M;
  o.graph.ef_construction = efc;
  o.graph.metric = MetricFrom(metric);
  o.graph.seed = seed;
  o.threshold = threshold;
  o.merge_ratio = merge_ratio;
  auto r = hn::TieredIndex::Create(o);
  ThrowIfError(r.status());
  return std::move(r.value());
}

hn::MergeMode ModeFrom(const std::string& name) {
  if (name == "distance") return hn::MergeMode::kDistance;
  if (name == "rrf") return hn::MergeMode::kRrf;
  ThrowInvalid("merge must be 'distance' or 'rrf', got '" + name + "'");
}

// A search started by search_async: the worker writes into ids/dist; the
// handle holds the index (alive until the search ends) and the outputs. The
// job owns copies of the queries and the allowed ids, so the caller's arrays
// may change or go away meanwhile.
struct TieredSearch {
  std::shared_ptr<hn::SearchTicket> ticket;
  py::object index;
  py::array_t<uint64_t> ids;
  py::array_t<float> dist;
  TieredSearch() = default;
  TieredSearch(const TieredSearch&) = delete;
  TieredSearch& operator=(const TieredSearch&) = delete;
  ~TieredSearch() {
    if (ticket && !ticket->done()) {  // dropped without wait(): the outputs must outlive the job
      py::gil_scoped_release release;
      (void)ticket->Wait();
    }
  }
  py::tuple Wait() {
    chitta::Status st;
    {
      py::gil_scoped_release release;
      st = ticket->Wait();
    }
    ThrowIfError(std::move(st));
    return py::make_tuple(ids, dist);
  }
};

std::unique_ptr<TieredSearch> StartSearch(const py::object& self, const py::array& queries,
                                          size_t k, size_t ef, const py::object& allowed,
                                          const std::string& merge) {
  const hn::TieredIndex& t = self.cast<const hn::TieredIndex&>();
  const Span<float> q = Rows(queries, t.options().graph.dim, "queries");
  const Filter f = AllowedFrom(allowed);
  const hn::MergeMode mode = ModeFrom(merge);
  Output out(q.n, k);
  auto handle = std::make_unique<TieredSearch>();
  handle->index = self;
  handle->ids = out.ids;
  handle->dist = out.dist;
  std::vector<float> qcopy(q.data, q.data + q.n * t.options().graph.dim);
  std::vector<uint64_t> acopy(f.ids, f.ids + f.n);
  uint64_t* oi = out.ids.mutable_data();
  float* od = out.dist.mutable_data();
  const size_t nq = q.n;
  const bool use = f.use;
  const hn::TieredIndex* tp = &t;
  handle->ticket = hn::ProcessSearchWorker().Submit(
      [tp, qcopy = std::move(qcopy), acopy = std::move(acopy), nq, k, ef, use, mode, oi, od] {
        return tp->Search(qcopy.data(), nq, k, ef, acopy.data(), acopy.size(), use, mode, 1, oi,
                          od);
      });
  return handle;
}

// The (ids, rows, matrix) a v2.0 graph file refers to (None: v1.0). The
// arrays are kept alive by the caller for the call.
struct RowRefs {
  std::unique_ptr<hn::RowSource> source;
};

RowRefs RowRefsFrom(const py::object& refs, size_t dim) {
  RowRefs r;
  if (refs.is_none()) return r;
  const py::tuple t = refs.cast<py::tuple>();
  if (t.size() != 3) ThrowInvalid("rows must be (ids, rows, matrix)");
  const Span<uint64_t> ids = Ids(t[0].cast<py::array>(), "ids");
  const py::array rows = t[1].cast<py::array>();
  Expect<int64_t>(rows, 1, "rows");
  if (static_cast<size_t>(rows.shape(0)) != ids.n) ThrowInvalid("ids and rows differ in length");
  const Span<float> m = hnsw_arrays::Rows(t[2].cast<py::array>(), dim, "matrix");
  r.source = std::make_unique<hn::RowSource>(ids.data, static_cast<const int64_t*>(rows.data()),
                                             ids.n, m.data, m.n, dim);
  return r;
}

}  // namespace

CHITTA_BIND(hnsw_tiered) {
  py::class_<TieredSearch>(m, "_TieredSearch")
      .def("wait", &TieredSearch::Wait)
      .def_property_readonly("done", [](const TieredSearch& s) { return s.ticket->done(); })
      .def_property_readonly("ran_on_worker", [](const TieredSearch& s) {
        return s.ticket->done() && s.ticket->ran_on_worker();  // False: not done, or run by wait()
      });

  m.attr("HNSW_TIER2_THRESHOLD") = hn::kTier2Threshold;
  m.attr("HNSW_DELTA_MERGE_RATIO") = hn::kDeltaMergeRatio;

  py::class_<hn::TieredIndex>(m, "_TieredHnswIndex")
      .def(py::init(&MakeTiered), py::arg("dim"), py::arg("M"), py::arg("ef_construction"),
           py::arg("metric"), py::arg("seed"), py::arg("threshold"), py::arg("merge_ratio"))
      .def("add", [](hn::TieredIndex& t, const py::array& ids, const py::array& vectors,
                     int threads) {
        const Batch b = AddBatch(ids, vectors, t.options().graph.dim);
        CallReleased([&] { return t.Add(b.ids, b.vectors, b.n, threads); });
      })
      .def("remove", [](hn::TieredIndex& t, const py::array& ids) {
        const Span<uint64_t> s = Ids(ids, "ids");
        CallReleased([&] { return t.MarkDeleted(s.data, s.n); });
      })
      .def("search", [](const hn::TieredIndex& t, const py::array& queries, size_t k, size_t ef,
                        const py::object& allowed, const std::string& merge, int threads) {
        const Span<float> q = Rows(queries, t.options().graph.dim, "queries");
        Filter f = AllowedFrom(allowed);
        const hn::MergeMode mode = ModeFrom(merge);
        Output out(q.n, k);
        uint64_t* oi = out.ids.mutable_data();
        float* od = out.dist.mutable_data();
        CallReleased([&] {
          return t.Search(q.data, q.n, k, ef, f.ids, f.n, f.use, mode, threads, oi, od);
        });
        return out.Tuple();
      })
      .def("search_async", &StartSearch, py::arg("queries"), py::arg("k"), py::arg("ef"),
           py::arg("allowed"), py::arg("merge"))
      .def("merge", [](hn::TieredIndex& t, bool force, int threads) {
        bool merged = false;
        CallReleased([&] { return t.Merge(force, threads, &merged); });
        return merged;
      })
      .def("save", [](const hn::TieredIndex& t, const std::string& base, const std::string& delta,
                      const py::object& refs) {
        const RowRefs r = RowRefsFrom(refs, t.options().graph.dim);
        CallReleased([&] { return t.Save(base, delta, r.source.get()); });
      }, py::arg("base"), py::arg("delta"), py::arg("rows") = py::none())
      .def_static("load", [](const std::string& base, const std::string& delta, uint64_t threshold,
                             double merge_ratio, const py::object& refs, uint32_t dim) {
        const RowRefs r = RowRefsFrom(refs, dim);
        return ValueReleased([&] {
          return hn::TieredIndex::Load(base, delta, threshold, merge_ratio, r.source.get());
        });
      }, py::arg("base"), py::arg("delta"), py::arg("threshold"), py::arg("merge_ratio"),
         py::arg("rows") = py::none(), py::arg("dim") = 0)
      .def("__len__", &hn::TieredIndex::size)
      .def("contains", &hn::TieredIndex::Contains)
      .def_property_readonly("needs_merge", &hn::TieredIndex::NeedsMerge)
      .def_property_readonly("base_size", &hn::TieredIndex::base_size)
      .def_property_readonly("delta_size", &hn::TieredIndex::delta_size)
      .def_property_readonly("merge_count", &hn::TieredIndex::merge_count)
      .def_property_readonly("dim", [](const hn::TieredIndex& t) { return t.options().graph.dim; })
      .def_property_readonly("M", [](const hn::TieredIndex& t) { return t.options().graph.M; })
      .def_property_readonly("ef_construction",
                             [](const hn::TieredIndex& t) { return t.options().graph.ef_construction; })
      .def_property_readonly(
          "metric", [](const hn::TieredIndex& t) { return hn::MetricName(t.options().graph.metric); })
      .def_property_readonly("seed", [](const hn::TieredIndex& t) { return t.options().graph.seed; })
      .def_property_readonly("threshold", [](const hn::TieredIndex& t) { return t.options().threshold; })
      .def_property_readonly("merge_ratio",
                             [](const hn::TieredIndex& t) { return t.options().merge_ratio; })
      .def("memory_bytes", &hn::TieredIndex::MemoryBytes);
}

}  // namespace chitta_ext
