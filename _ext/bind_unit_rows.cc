// _ext/bind_unit_rows.cc
//   _core._row_norms(rows f32[m, d]) -> f32[m]
//   _core._unit_rows(src f32[m, d], dst f32[k, d], k >= m) -> (norms f32[m], written)
//   _core._copy_rows(src buffer, offsets u64[m], dst u8[m, w]): dst[i] = src[offsets[i]:+w]
// The recall index's unit vectors (csrc/util/unit_rows.h): one pass over a
// run's vectors writes them normalised straight into the index's matrix.
// _copy_rows reads a checkpoint's vector references out of a mapped segment.
#include <pybind11/numpy.h>

#include <cstring>

#include "bind_util.h"
#include "registry.h"
#include "util/unit_rows.h"

namespace chitta_ext {
namespace {

py::array_t<float> RowNorms(const py::array& rows_in) {
  auto rows = Expect<float>(rows_in, 2, "rows");
  const size_t m = static_cast<size_t>(rows.shape(0)), d = static_cast<size_t>(rows.shape(1));
  py::array_t<float> norms(static_cast<py::ssize_t>(m));
  const float* src = rows.data();
  float* out = norms.mutable_data();
  {
    py::gil_scoped_release release;
    for (size_t i = 0; i < m; ++i) out[i] = chitta::util::RowNorm(src + i * d, d);
  }
  return norms;
}

py::tuple UnitRowsInto(const py::array& src_in, py::array& dst_in) {
  auto src = Expect<float>(src_in, 2, "src");
  auto dst = Expect<float>(dst_in, 2, "dst");
  if (!dst.writeable()) ThrowInvalid("dst must be writable");
  const size_t m = static_cast<size_t>(src.shape(0)), d = static_cast<size_t>(src.shape(1));
  if (static_cast<size_t>(dst.shape(1)) != d) ThrowInvalid("src and dst must have the same width");
  if (static_cast<size_t>(dst.shape(0)) < m) ThrowInvalid("dst has fewer rows than src");
  const char* s_lo = reinterpret_cast<const char*>(src.data());
  const char* d_lo = reinterpret_cast<const char*>(dst.data());
  if (m && d && s_lo < d_lo + dst.nbytes() && d_lo < s_lo + src.nbytes()) ThrowInvalid("dst must not overlap src");
  py::array_t<float> norms(static_cast<py::ssize_t>(m));
  const float* s = src.data();
  float* out = dst.mutable_data();
  float* n = norms.mutable_data();
  size_t written;
  {
    py::gil_scoped_release release;
    written = chitta::util::UnitRows(s, m, d, out, n);
  }
  return py::make_tuple(norms, written);
}

void CopyRows(const py::buffer& src_in, const py::array& offsets_in, py::array& dst_in) {
  py::buffer_info src = src_in.request(false);
  auto offsets = Expect<uint64_t>(offsets_in, 1, "offsets");
  auto dst = Expect<uint8_t>(dst_in, 2, "dst");
  if (!dst.writeable()) ThrowInvalid("dst must be writable");
  const size_t m = static_cast<size_t>(offsets.shape(0)), w = static_cast<size_t>(dst.shape(1));
  if (static_cast<size_t>(dst.shape(0)) != m) ThrowInvalid("dst must have one row per offset");
  const size_t size = static_cast<size_t>(src.size * src.itemsize);
  const uint64_t* at = offsets.data();
  for (size_t i = 0; i < m; ++i) {
    if (at[i] > size || size - at[i] < w) ThrowInvalid("an offset's row runs past the end of src");
  }
  const uint8_t* s = static_cast<const uint8_t*>(src.ptr);
  uint8_t* out = dst.mutable_data();
  {
    py::gil_scoped_release release;
    for (size_t i = 0; i < m; ++i) std::memcpy(out + i * w, s + at[i], w);
  }
}

}  // namespace

CHITTA_BIND(unit_rows) {
  m.def("_copy_rows", &CopyRows, py::arg("src"), py::arg("offsets"), py::arg("dst"),
        "dst[i] = the len(dst[i]) bytes of src at offsets[i] (each checked to lie inside src).");
  m.def("_row_norms", &RowNorms, py::arg("rows"),
        "L2 norm of each row of a float32 C-order matrix (double accumulation in a fixed order).");
  m.def("_unit_rows", &UnitRowsInto, py::arg("src"), py::arg("dst"),
        "(norms, written): each row of src with a finite norm > 0, divided by it, packed into dst "
        "from row 0 in order.");
}

}  // namespace chitta_ext
