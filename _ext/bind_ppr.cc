// _ext/bind_ppr.cc
// chitta._core._PprGraph: a directed weighted graph that takes appended nodes and edges
// and weight updates, and personalised PageRank over the subgraph a bounded BFS from
// the seeds reaches (csrc/graph/ppr.h). chitta/recall/graph_lane.py maps entities and
// memories to node ids. A shared mutex lets PageRank calls (GIL released) run while
// an update waits for them.
#include <pybind11/numpy.h>

#include <mutex>
#include <shared_mutex>
#include <string>

#include "bind_util.h"
#include "graph/ppr.h"

namespace chitta_ext {
namespace {

using chitta::graph::DirectedGraph;

struct PprGraph {
  DirectedGraph g;
  mutable std::shared_mutex mu;
};

template <typename T>
py::array_t<T> Arg(const py::handle& obj, const char* name) {
  if (!py::isinstance<py::array>(obj)) ThrowInvalid(std::string(name) + " must be a numpy array");
  return Expect<T>(py::reinterpret_borrow<py::array>(obj), 1, name);
}

std::unique_ptr<PprGraph> Make(int64_t n, const py::handle& src_obj, const py::handle& dst_obj,
                               const py::handle& w_obj) {
  if (n < 0 || n > static_cast<int64_t>(UINT32_MAX) - 1) {
    ThrowInvalid("n must be in [0, 2**32 - 1), got " + std::to_string(n));
  }
  auto src = Arg<uint32_t>(src_obj, "src");
  auto dst = Arg<uint32_t>(dst_obj, "dst");
  auto w = Arg<double>(w_obj, "weights");
  if (dst.shape(0) != src.shape(0) || w.shape(0) != src.shape(0)) {
    ThrowInvalid("src, dst and weights must have the same length");
  }
  auto out = std::make_unique<PprGraph>();
  chitta::Status st;
  {
    py::gil_scoped_release release;
    st = DirectedGraph::Build(static_cast<uint32_t>(n), src.data(), dst.data(), w.data(),
                              static_cast<size_t>(src.shape(0)), &out->g);
  }
  ThrowIfError(std::move(st));
  return out;
}

int64_t AddNodes(PprGraph& self, const py::handle& kinds_obj, const py::handle& keys_obj) {
  auto kinds = Arg<uint8_t>(kinds_obj, "kinds");
  auto keys = Arg<uint64_t>(keys_obj, "keys");
  if (kinds.shape(0) != keys.shape(0)) ThrowInvalid("kinds and keys must have the same length");
  uint32_t first = 0;
  chitta::Status st;
  {
    py::gil_scoped_release release;
    std::unique_lock lock(self.mu);
    st = self.g.AddNodes(kinds.data(), keys.data(), static_cast<size_t>(kinds.shape(0)), &first);
  }
  ThrowIfError(std::move(st));
  return first;
}

int64_t AddEdges(PprGraph& self, const py::handle& src_obj, const py::handle& dst_obj,
                 const py::handle& w_obj) {
  auto src = Arg<uint32_t>(src_obj, "src");
  auto dst = Arg<uint32_t>(dst_obj, "dst");
  auto w = Arg<double>(w_obj, "weights");
  if (dst.shape(0) != src.shape(0) || w.shape(0) != src.shape(0)) {
    ThrowInvalid("src, dst and weights must have the same length");
  }
  uint64_t first = 0;
  chitta::Status st;
  {
    py::gil_scoped_release release;
    std::unique_lock lock(self.mu);
    st = self.g.AddEdges(src.data(), dst.data(), w.data(), static_cast<size_t>(src.shape(0)),
                         &first);
  }
  ThrowIfError(std::move(st));
  return static_cast<int64_t>(first);
}

void SetWeights(PprGraph& self, const py::handle& slots_obj, const py::handle& w_obj) {
  auto slots = Arg<uint64_t>(slots_obj, "slots");
  auto w = Arg<double>(w_obj, "weights");
  if (w.shape(0) != slots.shape(0)) ThrowInvalid("slots and weights must have the same length");
  chitta::Status st;
  {
    py::gil_scoped_release release;
    std::unique_lock lock(self.mu);
    st = self.g.SetWeights(slots.data(), w.data(), static_cast<size_t>(slots.shape(0)));
  }
  ThrowIfError(std::move(st));
}

template <typename T>
py::array_t<T> Copy(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

py::tuple Run(const PprGraph& self, const py::handle& seeds_obj, double alpha, int max_hops,
              int max_iter, double tol, int64_t max_nodes, int ranked_kind, bool legacy) {
  auto seeds = Arg<uint32_t>(seeds_obj, "seeds");
  if (ranked_kind < -1 || ranked_kind > 255) ThrowInvalid("kind must be in [0, 255]");
  if (max_nodes < 0) ThrowInvalid("max_nodes must be >= 0 (0: no cap)");
  chitta::graph::PprParams p;
  p.alpha = alpha;
  p.max_hops = max_hops;
  p.max_iter = max_iter;
  p.tol = tol;
  p.max_nodes = static_cast<size_t>(max_nodes);
  p.legacy = legacy;
  chitta::graph::PprResult r;
  std::vector<uint64_t> keys;
  std::vector<double> ranked;
  std::vector<uint32_t> hop;
  chitta::Status st;
  {
    py::gil_scoped_release release;
    std::shared_lock lock(self.mu);
    st = chitta::graph::Ppr(self.g, seeds.data(), static_cast<size_t>(seeds.shape(0)), p, &r);
    if (st.ok() && ranked_kind >= 0) {
      chitta::graph::Ranked(self.g, r, static_cast<uint8_t>(ranked_kind), &keys, &ranked, &hop);
    }
  }
  ThrowIfError(std::move(st));
  if (ranked_kind >= 0) {
    return py::make_tuple(Copy(keys), Copy(ranked), Copy(hop), Copy(r.nodes), Copy(r.parents));
  }
  return py::make_tuple(Copy(r.nodes), Copy(r.scores), Copy(r.parents), r.iterations);
}

py::tuple Plain(const PprGraph& self, const py::handle& seeds, double alpha, int max_hops,
                int max_iter, double tol, int64_t max_nodes, bool legacy) {
  return Run(self, seeds, alpha, max_hops, max_iter, tol, max_nodes, -1, legacy);
}

py::tuple Among(const PprGraph& self, const py::handle& ids_obj) {
  auto ids = Arg<uint32_t>(ids_obj, "ids");
  std::vector<uint32_t> src, dst;
  std::vector<double> w;
  chitta::Status st;
  {
    std::shared_lock lock(self.mu);
    st = self.g.EdgesAmong(ids.data(), static_cast<size_t>(ids.shape(0)), &src, &dst, &w);
  }
  ThrowIfError(std::move(st));
  const auto m = static_cast<py::ssize_t>(src.size());
  py::array_t<uint32_t> s(m), d(m);
  py::array_t<double> ww(m);
  std::copy(src.begin(), src.end(), s.mutable_data());
  std::copy(dst.begin(), dst.end(), d.mutable_data());
  std::copy(w.begin(), w.end(), ww.mutable_data());
  return py::make_tuple(s, d, ww);
}

}  // namespace

CHITTA_BIND(ppr) {
  py::class_<PprGraph>(m, "_PprGraph",
                       "A directed weighted graph for personalised PageRank that takes deltas.")
      .def(py::init(&Make), py::arg("n"), py::arg("src"), py::arg("dst"), py::arg("weights"))
      .def_property_readonly("nodes", [](const PprGraph& s) { return s.g.nodes(); })
      .def_property_readonly("edges", [](const PprGraph& s) { return s.g.edges(); })
      .def("add_nodes", &AddNodes, py::arg("kinds"), py::arg("keys"),
           "Append nodes with order keys (kind, key); returns the first new node id.")
      .def("add_edges", &AddEdges, py::arg("src"), py::arg("dst"), py::arg("weights"),
           "Append edges; returns the first new slot (the edges get consecutive slots).")
      .def("set_weights", &SetWeights, py::arg("slots"), py::arg("weights"),
           "Set the weight of each slot (0: a tombstone, never followed).")
      .def("edges_among", &Among, py::arg("ids"),
           "(src, dst, weights): the edges between the given nodes (the induced subgraph).")
      .def("ppr", &Plain, py::arg("seeds"), py::arg("alpha") = 0.85, py::arg("max_hops") = 2,
           py::arg("max_iter") = 100, py::arg("tol") = 1e-10, py::arg("max_nodes") = 0,
           py::arg("legacy") = false,
           "(nodes, scores, parents, iterations): PageRank personalised uniformly over the "
           "seeds, on the subgraph within max_hops out-edges of them; stops when a bound "
           "on the scores' L1 error is below tol (legacy: the code before D-069, for the "
           "benchmark's side-by-side run; it stops when a sweep's L1 change is below tol).")
      .def("ppr_ranked", &Run, py::arg("seeds"), py::arg("alpha"), py::arg("max_hops"),
           py::arg("max_iter"), py::arg("tol"), py::arg("max_nodes"), py::arg("kind"),
           py::arg("legacy") = false,
           "(keys, scores, hop, nodes, parents): the same PageRank read for the lane: the "
           "order keys of the nodes of ``kind`` by score (ties by key), the other nodes "
           "whose BFS parent is a seed (by id), and the BFS nodes and parents.");
}

}  // namespace chitta_ext
