// _ext/hamming_arrays.h
// Array checks shared by the Hamming binding files: the Python layer already
// converts, so a wrong dtype, rank or layout here is refused, never cast.
#pragma once

#include <pybind11/numpy.h>

#include <string>

#include "registry.h"

namespace chitta_ext::hamming {

namespace py = pybind11;

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

inline void ExpectRows(const py::array& a, py::ssize_t rows, py::ssize_t cols, const char* what) {
  if (a.shape(0) != rows || a.shape(1) != cols) {
    ThrowInvalid(std::string(what) + " must have shape (" + std::to_string(rows) + ", " +
                 std::to_string(cols) + "), got (" + std::to_string(a.shape(0)) + ", " +
                 std::to_string(a.shape(1)) + ")");
  }
}

}  // namespace chitta_ext::hamming
