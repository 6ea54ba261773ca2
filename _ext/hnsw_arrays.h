// _ext/hnsw_arrays.h
// numpy checks shared by the HNSW bindings: exact dtype, C order, shape.
// Wrong input raises chitta.errors.InvalidArgument; nothing is cast silently.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <utility>

#include "bind_util.h"
#include "hnsw/hnsw.h"

namespace chitta_ext::hnsw_arrays {

namespace py = pybind11;

// A checked array's data and row count.
template <typename T>
struct Span {
  const T* data;
  size_t n;
};

// float32[n, dim] -> (pointer, n)
inline Span<float> Rows(const py::array& a, size_t dim, const char* what) {
  Expect<float>(a, 2, what);
  if (static_cast<size_t>(a.shape(1)) != dim) {
    ThrowInvalid(std::string(what) + " must have " + std::to_string(dim) + " columns, got " +
                 std::to_string(a.shape(1)));
  }
  return {static_cast<const float*>(a.data()), static_cast<size_t>(a.shape(0))};
}

// uint64[n] -> (pointer, n)
inline Span<uint64_t> Ids(const py::array& a, const char* what) {
  Expect<uint64_t>(a, 1, what);
  return {static_cast<const uint64_t*>(a.data()), static_cast<size_t>(a.shape(0))};
}

// The (ids, vectors) of an add: uint64[n] and float32[n, dim].
struct Batch {
  const uint64_t* ids;
  const float* vectors;
  size_t n;
};

inline Batch AddBatch(const py::array& ids, const py::array& vectors, size_t dim) {
  auto [ip, n] = Ids(ids, "ids");
  auto [vp, rows] = Rows(vectors, dim, "vectors");
  if (rows != n) ThrowInvalid("ids and vectors differ in length");
  return {ip, vp, n};
}

struct Filter {
  const uint64_t* ids = nullptr;
  size_t n = 0;
  bool use = false;
};

inline Filter AllowedFrom(const py::object& allowed) {
  Filter f;
  if (allowed.is_none()) return f;
  auto [p, n] = Ids(allowed.cast<py::array>(), "allowed");
  f.ids = p;
  f.n = n;
  f.use = true;
  return f;
}

// Output buffers of shape (nq, k).
struct Output {
  py::array_t<uint64_t> ids;
  py::array_t<float> dist;
  Output(size_t nq, size_t k)
      : ids(std::vector<py::ssize_t>{static_cast<py::ssize_t>(nq), static_cast<py::ssize_t>(k)}),
        dist(std::vector<py::ssize_t>{static_cast<py::ssize_t>(nq), static_cast<py::ssize_t>(k)}) {}
  py::tuple Tuple() { return py::make_tuple(ids, dist); }
};

inline chitta::hnsw::Metric MetricFrom(const std::string& name) {
  chitta::hnsw::Metric m;
  ThrowIfError(chitta::hnsw::ParseMetric(name.c_str(), &m));
  return m;
}

}  // namespace chitta_ext::hnsw_arrays
