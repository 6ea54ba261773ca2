// _ext/bind_util.h
// Helpers shared by the binding files: run a core call with the GIL released
// and raise its Status; refuse (never cast) a numpy array of the wrong dtype,
// rank or layout; copy a vector out as a new 1-D numpy array.
#pragma once

#include <pybind11/numpy.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "registry.h"

namespace chitta_ext {

// Runs fn() -> chitta::Status without the GIL, then raises a non-OK status.
template <typename Fn>
void CallReleased(Fn&& fn) {
  chitta::Status st;
  {
    py::gil_scoped_release release;
    st = fn();
  }
  ThrowIfError(std::move(st));
}

// Runs fn() -> chitta::Result<T> without the GIL; returns the value or raises.
template <typename Fn>
auto ValueReleased(Fn&& fn) {
  decltype(fn()) r = chitta::Status::OK();
  {
    py::gil_scoped_release release;
    r = fn();
  }
  ThrowIfError(r.status());
  return std::move(r.value());
}

// The array as array_t<T> if it has dtype T, rank ndim and C order; else InvalidArgument.
template <typename T>
py::array_t<T> Expect(const py::array& a, py::ssize_t ndim, const char* what) {
  if (!a.dtype().is(py::dtype::of<T>())) {
    ThrowInvalid(std::string(what) + " must have dtype " +
                 std::string(py::str(py::dtype::of<T>())) + ", got " +
                 std::string(py::str(a.dtype())));
  }
  if (a.ndim() != ndim) {
    ThrowInvalid(std::string(what) + " must be " + std::to_string(ndim) + "-D, got " +
                 std::to_string(a.ndim()) + "-D");
  }
  if (!(a.flags() & py::array::c_style)) {
    ThrowInvalid(std::string(what) + " must be C-contiguous");
  }
  return py::reinterpret_borrow<py::array_t<T>>(a);
}

// A new 1-D numpy array holding a copy of v.
template <typename T>
py::array_t<T> ToArray(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

}  // namespace chitta_ext
