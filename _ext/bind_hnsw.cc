// _ext/bind_hnsw.cc
// chitta._core._HnswIndex and _BruteForceIndex. Each holder adds a
// readers-writer lock so that Python threads may search concurrently while
// add/remove wait for exclusive use. The GIL is released in every bulk call.
#include <memory>
#include <shared_mutex>
#include <string>

#include "hnsw/brute_force.h"
#include "hnsw/hnsw.h"
#include "hnsw_arrays.h"

namespace chitta_ext {
namespace {

namespace hn = chitta::hnsw;
using namespace hnsw_arrays;  // NOLINT

struct PyHnsw {
  std::unique_ptr<hn::HnswIndex> index;
  mutable std::shared_mutex mu;
};

struct PyBrute {
  std::unique_ptr<hn::BruteForceIndex> index;
  mutable std::shared_mutex mu;
};

std::unique_ptr<PyHnsw> MakeHnsw(uint32_t dim, uint32_t M, uint32_t efc, const std::string& metric,
                                 uint64_t seed) {
  hn::Options o;
  o.dim = dim;
  o.M = M;
  o.ef_construction = efc;
  o.metric = MetricFrom(metric);
  o.seed = seed;
  auto r = hn::HnswIndex::Create(o);
  ThrowIfError(r.status());
  auto h = std::make_unique<PyHnsw>();
  h->index = std::move(r.value());
  return h;
}

// The calls both holders share: remove under the write lock, size and
// membership under the read lock.
template <typename Holder>
void Remove(Holder& h, const py::array& ids) {
  const Span<uint64_t> s = Ids(ids, "ids");
  CallReleased([&] {
    std::unique_lock<std::shared_mutex> lock(h.mu);
    return h.index->MarkDeleted(s.data, s.n);
  });
}

// Checks the queries and the filter, then runs search(queries, filter, out_ids,
// out_dist) under the read lock without the GIL; returns (ids, distances).
template <typename Holder, typename SearchFn>
py::tuple SearchLocked(const Holder& h, const py::array& queries, size_t k,
                       const py::object& allowed, SearchFn&& search) {
  const Span<float> q = Rows(queries, h.index->dim(), "queries");
  const Filter f = AllowedFrom(allowed);
  Output out(q.n, k);
  uint64_t* oi = out.ids.mutable_data();
  float* od = out.dist.mutable_data();
  CallReleased([&] {
    std::shared_lock<std::shared_mutex> lock(h.mu);
    return search(q, f, oi, od);
  });
  return out.Tuple();
}

template <typename Holder>
size_t Size(const Holder& h) {
  std::shared_lock<std::shared_mutex> lock(h.mu);
  return h.index->size();
}

template <typename Holder>
bool Contains(const Holder& h, uint64_t id) {
  std::shared_lock<std::shared_mutex> lock(h.mu);
  return h.index->Contains(id);
}

}  // namespace

CHITTA_BIND(hnsw) {
  m.def("hnsw_distance_implementation", &hn::DistanceImplementation,
        "The dot-product kernel in use: 'avx512', 'avx2' or 'generic'.");

  py::class_<PyHnsw>(m, "_HnswIndex")
      .def(py::init(&MakeHnsw), py::arg("dim"), py::arg("M"), py::arg("ef_construction"),
           py::arg("metric"), py::arg("seed"))
      .def("add", [](PyHnsw& h, const py::array& ids, const py::array& vectors, int threads) {
        const Batch b = AddBatch(ids, vectors, h.index->dim());
        CallReleased([&] {
          std::unique_lock<std::shared_mutex> lock(h.mu);
          return h.index->Add(b.ids, b.vectors, b.n, threads);
        });
      })
      .def("remove", &Remove<PyHnsw>)
      .def("search", [](const PyHnsw& h, const py::array& queries, size_t k, size_t ef,
                        const py::object& allowed, int threads) {
        return SearchLocked(h, queries, k, allowed, [&](Span<float> q, const Filter& f,
                                                        uint64_t* oi, float* od) {
          return h.index->Search(q.data, q.n, k, ef, f.ids, f.n, f.use, threads, oi, od);
        });
      })
      .def("save", [](const PyHnsw& h, const std::string& path) {
        CallReleased([&] {
          std::shared_lock<std::shared_mutex> lock(h.mu);
          return h.index->Save(path);
        });
      })
      .def_static("load", [](const std::string& path) {
        auto h = std::make_unique<PyHnsw>();
        h->index = ValueReleased([&] { return hn::HnswIndex::Load(path); });
        return h;
      })
      .def("__len__", &Size<PyHnsw>)
      .def("contains", &Contains<PyHnsw>)
      .def_property_readonly("dim", [](const PyHnsw& h) { return h.index->options().dim; })
      .def_property_readonly("M", [](const PyHnsw& h) { return h.index->options().M; })
      .def_property_readonly("ef_construction",
                             [](const PyHnsw& h) { return h.index->options().ef_construction; })
      .def_property_readonly("metric",
                             [](const PyHnsw& h) { return hn::MetricName(h.index->options().metric); })
      .def_property_readonly("seed", [](const PyHnsw& h) { return h.index->options().seed; })
      .def_property_readonly("node_count", [](const PyHnsw& h) {
        std::shared_lock<std::shared_mutex> lock(h.mu);
        return h.index->node_count();
      })
      .def("memory_bytes", [](const PyHnsw& h) {
        std::shared_lock<std::shared_mutex> lock(h.mu);
        return h.index->MemoryBytes();
      })
      .def("unreachable_count", [](const PyHnsw& h) {
        std::shared_lock<std::shared_mutex> lock(h.mu);
        return h.index->UnreachableCount();
      })
      .def("check_integrity", [](const PyHnsw& h) {
        std::shared_lock<std::shared_mutex> lock(h.mu);
        ThrowIfError(h.index->CheckIntegrity());
      });

  py::class_<PyBrute>(m, "_BruteForceIndex")
      .def(py::init([](uint32_t dim, const std::string& metric) {
             auto r = hn::BruteForceIndex::Create(dim, MetricFrom(metric));
             ThrowIfError(r.status());
             auto h = std::make_unique<PyBrute>();
             h->index = std::move(r.value());
             return h;
           }),
           py::arg("dim"), py::arg("metric"))
      .def("add", [](PyBrute& h, const py::array& ids, const py::array& vectors) {
        const Batch b = AddBatch(ids, vectors, h.index->dim());
        CallReleased([&] {
          std::unique_lock<std::shared_mutex> lock(h.mu);
          return h.index->Add(b.ids, b.vectors, b.n);
        });
      })
      .def("remove", &Remove<PyBrute>)
      .def("search", [](const PyBrute& h, const py::array& queries, size_t k,
                        const py::object& allowed, int threads) {
        return SearchLocked(h, queries, k, allowed, [&](Span<float> q, const Filter& f,
                                                        uint64_t* oi, float* od) {
          return h.index->Search(q.data, q.n, k, f.ids, f.n, f.use, threads, oi, od);
        });
      })
      .def("__len__", &Size<PyBrute>)
      .def("contains", &Contains<PyBrute>)
      .def_property_readonly("dim", [](const PyBrute& h) { return h.index->dim(); })
      .def_property_readonly("metric",
                             [](const PyBrute& h) { return hn::MetricName(h.index->metric()); });
}

}  // namespace chitta_ext
