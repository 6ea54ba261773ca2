// _ext/bind_row_map.cc
// chitta._core.RowMap: the native id -> row map (csrc/util/row_map.h).
// Converts numpy arrays (refused, never cast), releases the GIL for bulk
// calls, maps Status. chitta/organs/index/row_map.py is the typed surface.
#include <pybind11/numpy.h>

#include <algorithm>
#include <string>

#include "registry.h"
#include "util/row_map.h"

namespace chitta_ext {
namespace {

using chitta::util::RowMap;

py::array_t<uint64_t> RequireIds(const py::handle& obj) {
  if (!py::isinstance<py::array>(obj)) ThrowInvalid("ids must be a numpy array");
  auto arr = py::reinterpret_borrow<py::array>(obj);
  if (!arr.dtype().is(py::dtype::of<uint64_t>())) {
    ThrowInvalid("ids must have dtype uint64, got " + std::string(py::str(arr.dtype())));
  }
  if (arr.ndim() != 1) ThrowInvalid("ids must be 1-D, got " + std::to_string(arr.ndim()) + "-D");
  if (!(arr.flags() & py::array::c_style)) ThrowInvalid("ids must be C-contiguous");
  return py::reinterpret_borrow<py::array_t<uint64_t>>(arr);
}

}  // namespace

CHITTA_BIND(row_map) {
  py::class_<RowMap>(m, "RowMap")
      .def(py::init<>())
      .def("__len__", &RowMap::size)
      .def("row", &RowMap::Row, py::arg("id"))
      .def("contains", &RowMap::Contains, py::arg("id"))
      .def("add_one", &RowMap::AddOne, py::arg("id"))
      .def("memory_bytes", &RowMap::MemoryBytes)
      .def("reserve", [](RowMap& self, size_t n) {
        py::gil_scoped_release release;
        self.Reserve(n);
      }, py::arg("n"))
      .def("add", [](RowMap& self, const py::handle& ids_in) {
        auto ids = RequireIds(ids_in);
        const auto n = ids.shape(0);
        py::array_t<bool> is_new(n);
        chitta::Status st;
        {
          py::gil_scoped_release release;
          static_assert(sizeof(bool) == sizeof(uint8_t), "bool is one byte");
          st = self.Add(ids.data(), static_cast<size_t>(n),
                        reinterpret_cast<uint8_t*>(is_new.mutable_data()));
        }
        ThrowIfError(std::move(st));
        return is_new;
      }, py::arg("ids"))
      .def("rows", [](const RowMap& self, const py::handle& ids_in) {
        auto ids = RequireIds(ids_in);
        const auto n = ids.shape(0);
        py::array_t<int64_t> out(n);
        {
          py::gil_scoped_release release;
          self.Rows(ids.data(), static_cast<size_t>(n), out.mutable_data());
        }
        return out;
      }, py::arg("ids"))
      .def("ids", [](const RowMap& self) {
        const auto& ids = self.ids();
        py::array_t<uint64_t> out(static_cast<py::ssize_t>(ids.size()));
        {
          py::gil_scoped_release release;
          std::copy(ids.begin(), ids.end(), out.mutable_data());
        }
        return out;
      });
}

}  // namespace chitta_ext
