// _ext/hamming_arrays.h
// Array checks shared by the Hamming binding files: the Python layer already
// converts, so a wrong dtype, rank, layout (Expect, bind_util.h) or shape here
// is refused, never cast.
#pragma once

#include <pybind11/numpy.h>

#include <string>

#include "bind_util.h"

namespace chitta_ext::hamming {

namespace py = pybind11;

using ::chitta_ext::Expect;

inline void ExpectRows(const py::array& a, py::ssize_t rows, py::ssize_t cols, const char* what) {
  if (a.shape(0) != rows || a.shape(1) != cols) {
    ThrowInvalid(std::string(what) + " must have shape (" + std::to_string(rows) + ", " +
                 std::to_string(cols) + "), got (" + std::to_string(a.shape(0)) + ", " +
                 std::to_string(a.shape(1)) + ")");
  }
}

}  // namespace chitta_ext::hamming
