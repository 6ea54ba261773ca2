// _ext/bind_recall.cc
// chitta._core binding of the recall tail (csrc/recall/candidates.h): the
// fused candidates' state gathered from the organs' columns, then scored and
// ranked. Columns are taken as they are (dtype and layout checked, never
// cast or copied). chitta/recall/engine.py is the only caller.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "recall/candidates.h"
#include "registry.h"
#include "util/row_map.h"

namespace chitta_ext {
namespace {

using chitta::recall::Gathered;

// A 1-D C-contiguous array of exactly T, as a pointer; its length in *len.
template <typename T>
const T* ColumnOf(const py::handle& obj, const char* name, size_t* len) {
  if (!py::isinstance<py::array_t<T>>(obj)) {
    ThrowInvalid(std::string(name) + " must be a numpy array of " + std::string(py::str(py::dtype::of<T>())));
  }
  auto arr = py::reinterpret_borrow<py::array>(obj);
  if (arr.ndim() != 1 || !(arr.flags() & py::array::c_style)) {
    ThrowInvalid(std::string(name) + " must be 1-D and C-contiguous");
  }
  *len = static_cast<size_t>(arr.shape(0));
  return static_cast<const T*>(arr.data());
}

// Like ColumnOf, and at least `n` long; None gives nullptr.
template <typename T>
const T* OptionalColumn(const py::handle& obj, const char* name, size_t n) {
  if (obj.is_none()) return nullptr;
  size_t len = 0;
  const T* p = ColumnOf<T>(obj, name, &len);
  if (len != n) ThrowInvalid(std::string(name) + " must hold one value per kept candidate");
  return p;
}

template <typename T>
py::array_t<T> ToArray(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

const chitta::util::RowMap& MapOf(const py::handle& obj, const char* name) {
  try {
    return obj.cast<const chitta::util::RowMap&>();
  } catch (const py::cast_error&) {
    ThrowInvalid(std::string(name) + " must be a chitta._core.RowMap");
  }
}

chitta::scoring::Weights WeightsOf(const py::tuple& weights) {
  if (py::len(weights) != 8) ThrowInvalid("weights must be a tuple of 8 floats");
  chitta::scoring::Weights w;
  double* fields[] = {&w.w_fused,        &w.w_similarity, &w.w_activation,      &w.w_freshness,
                      &w.freshness_rate, &w.actr_decay,   &w.staged_multiplier, &w.tier_step};
  for (size_t i = 0; i < 8; ++i) *fields[i] = weights[i].cast<double>();
  return w;
}

// numpy's cblas_sdot, set once by chitta/recall/native_dot.py (0: none).
std::atomic<chitta::recall::DotFn> g_dot{nullptr};

Gathered Gather(const py::list& lists, const std::vector<double>& weights, double rrf_k, int64_t limit,
                const py::tuple& mem_cols, const py::tuple& idx_cols, const py::object& query,
                const py::object& units) {
  if (limit < 0) ThrowInvalid("limit must be >= 0");
  if (py::len(mem_cols) != 8) ThrowInvalid("memory columns: (map, dead, created, confidence, strength, tier, kind, kind_weight)");
  if (py::len(idx_cols) != 3) ThrowInvalid("index columns: (map, staged, vector_row)");
  std::vector<chitta::fusion::RankedList> ranked;
  ranked.reserve(py::len(lists));
  for (const auto& item : lists) {
    size_t len = 0;
    const uint64_t* ids = ColumnOf<uint64_t>(item, "each ranked list", &len);
    ranked.push_back({ids, len});
  }
  chitta::recall::MemoryColumns mem;
  mem.map = &MapOf(mem_cols[0], "memories map");
  size_t lens[6];
  mem.dead = reinterpret_cast<const uint8_t*>(ColumnOf<bool>(mem_cols[1], "dead", &lens[0]));
  mem.created_ms = ColumnOf<int64_t>(mem_cols[2], "created", &lens[1]);
  mem.confidence = ColumnOf<double>(mem_cols[3], "confidence", &lens[2]);
  mem.strength = ColumnOf<double>(mem_cols[4], "strength", &lens[3]);
  mem.tier = ColumnOf<int64_t>(mem_cols[5], "tier", &lens[4]);
  mem.kind = ColumnOf<uint32_t>(mem_cols[6], "kind", &lens[5]);
  mem.kind_weight = ColumnOf<double>(mem_cols[7], "kind_weight", &mem.kinds);
  mem.rows = *std::min_element(lens, lens + 6);
  chitta::recall::IndexColumns idx;
  idx.map = &MapOf(idx_cols[0], "index map");
  size_t ilens[2];
  idx.staged = reinterpret_cast<const uint8_t*>(ColumnOf<bool>(idx_cols[1], "staged", &ilens[0]));
  idx.vector_row = ColumnOf<int64_t>(idx_cols[2], "vector_row", &ilens[1]);
  idx.rows = std::min(ilens[0], ilens[1]);
  chitta::recall::CosineInputs cos;
  if (query.is_none() != units.is_none()) ThrowInvalid("query and units go together");
  if (!query.is_none()) {
    cos.dot = g_dot.load();
    if (cos.dot == nullptr) ThrowInvalid("no dot product was set (_recall_set_dot)");
    if (!py::isinstance<py::array_t<float>>(units)) ThrowInvalid("units must be a float32 matrix");
    auto mat = py::reinterpret_borrow<py::array>(units);
    if (mat.ndim() != 2 || !(mat.flags() & py::array::c_style)) ThrowInvalid("units must be 2-D and C-contiguous");
    size_t qlen = 0;
    cos.query = ColumnOf<float>(query, "query", &qlen);
    cos.rows = static_cast<size_t>(mat.shape(0));
    cos.dim = static_cast<size_t>(mat.shape(1));
    if (qlen != cos.dim) ThrowInvalid("query and units differ in width");
    cos.units = static_cast<const float*>(mat.data());
  }
  Gathered g;
  chitta::Status st;
  {
    // Raw pointers into arrays the caller's arguments keep alive; the dot is BLAS's sdot.
    py::gil_scoped_release release;
    st = chitta::recall::GatherCandidates(ranked, weights, rrf_k, static_cast<size_t>(limit), mem, idx, cos, &g);
  }
  ThrowIfError(std::move(st));
  return g;
}

}  // namespace

CHITTA_BIND(recall) {
  py::class_<Gathered>(m, "_RecallCandidates")
      .def_property_readonly("size", [](const Gathered& g) { return g.kept_ids.size(); })
      .def_property_readonly("fused_size", [](const Gathered& g) { return g.ids.size(); })
      .def_property_readonly("best", [](const Gathered& g) { return g.fused.empty() ? 0.0 : g.fused[0]; })
      .def_property_readonly("ids", [](const Gathered& g) { return ToArray(g.ids); })
      .def_property_readonly("fused", [](const Gathered& g) { return ToArray(g.fused); })
      .def_property_readonly("ranks", [](const Gathered& g) {
        py::array_t<int32_t> out({static_cast<py::ssize_t>(g.ids.size()), static_cast<py::ssize_t>(g.lists)});
        std::copy(g.ranks.begin(), g.ranks.end(), out.mutable_data());
        return out;
      })
      .def_property_readonly("keep", [](const Gathered& g) { return ToArray(g.keep); })
      .def_property_readonly("kept_ids", [](const Gathered& g) { return ToArray(g.kept_ids); })
      .def_property_readonly("kept_fused", [](const Gathered& g) { return ToArray(g.kept_fused); })
      .def_property_readonly("created_ms", [](const Gathered& g) { return ToArray(g.created_ms); })
      .def_property_readonly("vector_row", [](const Gathered& g) { return ToArray(g.vector_row); })
      .def_property_readonly("cosine", [](const Gathered& g) -> py::object {
        if (g.cosine.size() != g.kept_ids.size()) return py::none();
        return ToArray(g.cosine);
      })
      .def(
          "rank",
          [](const Gathered& g, const py::object& fused, const py::object& cosine, const py::object& suppressed,
             const py::object& trace_offsets, const py::object& trace_ms, double best_fused, int64_t now_ms,
             const py::tuple& weights, int64_t k) {
            if (k < 0) ThrowInvalid("k must be >= 0");
            const size_t n = g.kept_ids.size();
            chitta::recall::RankInputs in;
            in.fused = OptionalColumn<double>(fused, "fused", n);
            in.cosine = OptionalColumn<double>(cosine, "cosine", n);
            in.suppressed = OptionalColumn<double>(suppressed, "suppressed", n);
            if (trace_offsets.is_none() != trace_ms.is_none()) {
              ThrowInvalid("trace_offsets and trace_ms go together");
            }
            if (!trace_offsets.is_none()) {
              in.trace_offsets = OptionalColumn<int64_t>(trace_offsets, "trace_offsets", n + 1);
              in.trace_ms = ColumnOf<int64_t>(trace_ms, "trace_ms", &in.trace_len);
            }
            std::vector<double> scores;
            std::vector<uint32_t> top;
            ThrowIfError(chitta::recall::Rank(g, in, best_fused, now_ms, WeightsOf(weights),
                                              static_cast<size_t>(k), &scores, &top));
            // The hits' fields as Python objects, best first: ids, scores, fused scores, lane ranks.
            const size_t m = top.size();
            py::list ids(m), top_scores(m), top_fused(m), ranks(m);
            for (size_t r = 0; r < m; ++r) {
              const uint32_t j = top[r];
              ids[r] = py::int_(g.kept_ids[j]);
              top_scores[r] = py::float_(scores[j]);
              top_fused[r] = py::float_(in.fused != nullptr ? in.fused[j] : g.kept_fused[j]);
              py::tuple lane(g.lists);
              const int32_t* row = g.ranks.data() + static_cast<size_t>(g.keep[j]) * g.lists;
              for (size_t c = 0; c < g.lists; ++c) lane[c] = py::int_(row[c]);
              ranks[r] = std::move(lane);
            }
            return py::make_tuple(ids, top_scores, top_fused, ranks, ToArray(scores));
          },
          py::arg("fused"), py::arg("cosine"), py::arg("suppressed"), py::arg("trace_offsets"),
          py::arg("trace_ms"), py::arg("best_fused"), py::arg("now_ms"), py::arg("weights"), py::arg("k"),
          "The best k, best first: (ids, scores, fused scores, lane ranks (1-based, 0: absent), "
          "every kept candidate's score).");
  m.def(
      "_recall_set_dot",
      [](uintptr_t address) {
        g_dot.store(reinterpret_cast<chitta::recall::DotFn>(address));  // 0 clears it
      },
      py::arg("address"),
      "Set the cblas_sdot (64-bit integers) the gather computes cosines with: numpy's own, as "
      "chitta.recall.native_dot found and checked it. Anything else crashes the process.");
  m.def("_recall_gather", &Gather, py::arg("lists"), py::arg("weights"), py::arg("rrf_k"), py::arg("limit"),
        py::arg("memory_columns"), py::arg("index_columns"), py::arg("query") = py::none(),
        py::arg("units") = py::none(),
        "Fuse the lanes' lists and gather the live candidates' scoring state (chitta.recall.engine).");
}

}  // namespace chitta_ext
