// _ext/bind_posting.cc
// chitta._core._PostingIndex: converts numpy arrays, releases the GIL, maps
// Status to chitta.errors. No logic: chitta/organs/index/posting.py is the typed
// surface and csrc/posting/ does the work.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "posting/posting_index.h"
#include "bind_util.h"

namespace chitta_ext {
namespace {

using chitta::posting::PostingIndex;

// Refuses (never casts) an array of the wrong dtype, rank or layout.
template <typename T>
py::array_t<T> Require(const py::handle& obj, const char* name, py::ssize_t ndim) {
  if (!py::isinstance<py::array>(obj)) ThrowInvalid(std::string(name) + " must be a numpy array");
  return Expect<T>(py::reinterpret_borrow<py::array>(obj), ndim, name);
}

uint32_t U32Arg(int64_t v, const char* name) {
  if (v < 0 || v > static_cast<int64_t>(UINT32_MAX)) {
    ThrowInvalid(std::string(name) + " out of range: " + std::to_string(v));
  }
  return static_cast<uint32_t>(v);
}

std::unique_ptr<PostingIndex> Make(int64_t n_features, int64_t active, double compact_fraction) {
  chitta::posting::Options o;
  o.n_features = U32Arg(n_features, "n_features");
  o.active = U32Arg(active, "active");
  o.compact_fraction = compact_fraction;
  auto r = PostingIndex::Create(o);
  ThrowIfError(r.status());
  return std::move(r.value());
}

void Add(PostingIndex& self, const py::handle& ids_obj, const py::handle& feats_obj,
         const py::handle& acts_obj) {
  auto ids = Require<uint64_t>(ids_obj, "ids", 1);
  auto feats = Require<uint32_t>(feats_obj, "features", 2);
  const size_t n = static_cast<size_t>(ids.shape(0));
  if (static_cast<size_t>(feats.shape(0)) != n || feats.shape(1) != self.active()) {
    ThrowInvalid("features must have shape (" + std::to_string(n) + ", " +
                 std::to_string(self.active()) + ")");
  }
  const float* acts_ptr = nullptr;
  py::array_t<float> acts;
  if (!acts_obj.is_none()) {
    acts = Require<float>(acts_obj, "activations", 2);
    if (acts.shape(0) != feats.shape(0) || acts.shape(1) != feats.shape(1)) {
      ThrowInvalid("activations must have the shape of features");
    }
    acts_ptr = acts.data();
  }
  CallReleased([&] { return self.Add(ids.data(), n, feats.data(), acts_ptr); });
}

void Reserve(PostingIndex& self, int64_t rows, const py::handle& counts_obj, bool activations) {
  if (rows < 0) ThrowInvalid("rows must be >= 0");
  auto counts = Require<uint32_t>(counts_obj, "feature_counts", 1);
  if (static_cast<size_t>(counts.shape(0)) != self.n_features()) {
    ThrowInvalid("feature_counts must have n_features (" + std::to_string(self.n_features()) +
                 ") entries");
  }
  const uint32_t* c = counts.data();
  py::gil_scoped_release release;
  self.Reserve(static_cast<size_t>(rows), c, activations);
}

void Remove(PostingIndex& self, const py::handle& ids_obj) {
  auto ids = Require<uint64_t>(ids_obj, "ids", 1);
  CallReleased([&] { return self.Remove(ids.data(), static_cast<size_t>(ids.shape(0))); });
}

py::tuple Search(const PostingIndex& self, const py::handle& feats_obj, int64_t k,
                 const py::handle& allowed_obj, unsigned num_threads) {
  auto feats = Require<uint32_t>(feats_obj, "features", 2);
  if (k <= 0) ThrowInvalid("k must be at least 1, got " + std::to_string(k));
  if (k > INT32_MAX) ThrowInvalid("k too large: " + std::to_string(k));
  const size_t nq = static_cast<size_t>(feats.shape(0));
  const size_t width = static_cast<size_t>(feats.shape(1));
  py::array_t<uint64_t> allowed;
  chitta::posting::AllowedIds allowed_ids;
  const chitta::posting::AllowedIds* allowed_ptr = nullptr;
  if (!allowed_obj.is_none()) {
    allowed = Require<uint64_t>(allowed_obj, "allowed", 1);
    allowed_ids = {allowed.data(), static_cast<size_t>(allowed.shape(0))};
    allowed_ptr = &allowed_ids;
  }
  const size_t kk = static_cast<size_t>(k);
  const std::vector<py::ssize_t> shape = {static_cast<py::ssize_t>(nq),
                                          static_cast<py::ssize_t>(kk)};
  py::array_t<uint64_t> out_ids(shape);
  py::array_t<uint32_t> out_counts(shape);
  uint64_t* ids_ptr = out_ids.mutable_data();
  uint32_t* counts_ptr = out_counts.mutable_data();
  CallReleased([&] {
    return self.Search(feats.data(), nq, width, kk, allowed_ptr, ids_ptr, counts_ptr, num_threads);
  });
  return py::make_tuple(out_ids, out_counts);
}

py::tuple Get(const PostingIndex& self, uint64_t id) {
  py::array_t<uint32_t> feats(self.active());
  py::array_t<float> acts(self.active());
  ThrowIfError(self.Get(id, feats.mutable_data(), acts.mutable_data()));
  return py::make_tuple(feats, acts);
}

py::array_t<uint64_t> LiveIds(const PostingIndex& self) {
  std::vector<uint64_t> ids;
  {
    py::gil_scoped_release release;
    ids = self.LiveIds();
  }
  return ToArray(ids);
}

}  // namespace

CHITTA_BIND(posting) {
  py::class_<PostingIndex>(m, "_PostingIndex",
                           "Native sparse-code posting index; use chitta.organs.index.PostingIndex.")
      .def(py::init(&Make), py::arg("n_features"), py::arg("active"),
           py::arg("compact_fraction") = chitta::posting::kDefaultCompactFraction)
      .def("add", &Add, py::arg("ids"), py::arg("features"), py::arg("activations"))
      .def("reserve", &Reserve, py::arg("rows"), py::arg("feature_counts"),
           py::arg("activations"))
      .def("remove", &Remove, py::arg("ids"))
      .def("search", &Search, py::arg("features"), py::arg("k"), py::arg("allowed"),
           py::arg("num_threads") = 0u)
      .def("compact", [](PostingIndex& self) {
        py::gil_scoped_release release;
        self.Compact();
      })
      .def("__len__", &PostingIndex::size)
      .def("contains", &PostingIndex::Contains, py::arg("id"))
      .def("memory_bytes", &PostingIndex::MemoryBytes)
      .def("num_tombstones", &PostingIndex::num_tombstones)
      .def("unit_activations", &PostingIndex::unit_activations)
      .def("live_ids", &LiveIds)
      .def("get", &Get, py::arg("id"))
      .def_property_readonly("n_features", &PostingIndex::n_features)
      .def_property_readonly("active", &PostingIndex::active)
      .def("_set_allowed_strategy", [](PostingIndex& self, int s) {
        if (s < 0 || s > 2) ThrowInvalid("strategy must be 0, 1 or 2");
        self.set_allowed_strategy_for_test(static_cast<chitta::posting::AllowedStrategy>(s));
      })
      .def("_set_count_mode", [](PostingIndex& self, int m) {
        if (m < 0 || m > 2) ThrowInvalid("count mode must be 0, 1 or 2");
        self.set_count_mode_for_test(static_cast<chitta::posting::CountMode>(m));
      })
      .def("save", [](const PostingIndex& self, const std::string& path) {
        CallReleased([&] { return self.Save(path); });
      }, py::arg("path"))
      .def_static("load", [](const std::string& path) {
        return ValueReleased([&] { return PostingIndex::Load(path); });
      }, py::arg("path"));
  m.attr("POSTING_PAD_ID") = py::int_(chitta::posting::kPadId);
}

}  // namespace chitta_ext
