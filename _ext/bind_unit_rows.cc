// _ext/bind_unit_rows.cc
//   _core._row_norms(rows f32[m, d]) -> f32[m]
//   _core._unit_rows(src f32[m, d], dst f32[k, d], k >= m) -> (norms f32[m], written)
//   _core._copy_rows(src buffer, offsets u64[m], dst u8[m, w]): dst[i] = src[offsets[i]:+w]
// The recall index's unit vectors (csrc/util/unit_rows.h): one pass over a
// run's vectors writes them normalised straight into the index's matrix.
//   _core._unit_rows_at(buffers, seg u32[m], offsets u64[m], dst f32[k, d]) -> (norms, written)
//   _core._crc_rows_at(buffers, seg u32[m], offsets u64[m], width) -> CRC-32C of the rows in order
//   _core._first_different_row_at(buffers, seg, offsets, rows u8[m, w]) -> first row that differs, or -1
// _copy_rows reads a checkpoint's vector references out of a mapped segment; the two
// `_at` functions read row i at buffers[seg[i]][offsets[i]:] in place (the mapped
// segments of chitta/field/checkpoint/mapped_vectors.py), every reference checked first.
#include <pybind11/numpy.h>

#include <cstring>
#include <vector>

#include "bind_util.h"
#include "registry.h"
#include "util/crc32c.h"
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

// The rows of buffers[seg[i]] at offsets[i], width bytes each, every one checked to lie
// inside its buffer; the buffer infos stay held (and the data mapped) while this lives.
class RowRefs {
 public:
  RowRefs(const py::tuple& buffers, const py::array& seg_in, const py::array& offsets_in, size_t width)
      : seg_(Expect<uint32_t>(seg_in, 1, "seg")), at_(Expect<uint64_t>(offsets_in, 1, "offsets")) {
    if (seg_.shape(0) != at_.shape(0)) ThrowInvalid("seg and offsets must have one entry per row");
    for (const auto& b : buffers) infos_.push_back(py::reinterpret_borrow<py::buffer>(b).request(false));
    const uint32_t* seg = seg_.data();
    const uint64_t* at = at_.data();
    for (size_t i = 0; i < rows(); ++i) {
      if (seg[i] >= infos_.size()) ThrowInvalid("a row names a buffer that is not given");
      const auto& info = infos_[seg[i]];
      const size_t size = static_cast<size_t>(info.size * info.itemsize);
      if (at[i] > size || size - at[i] < width) ThrowInvalid("a row runs past the end of its buffer");
    }
  }
  size_t rows() const { return static_cast<size_t>(seg_.shape(0)); }
  const uint8_t* row(size_t i) const {
    return static_cast<const uint8_t*>(infos_[seg_.data()[i]].ptr) + at_.data()[i];
  }

 private:
  py::array_t<uint32_t> seg_;
  py::array_t<uint64_t> at_;
  std::vector<py::buffer_info> infos_;
};

py::tuple UnitRowsAt(const py::tuple& buffers, const py::array& seg, const py::array& offsets, py::array& dst_in) {
  auto dst = Expect<float>(dst_in, 2, "dst");
  if (!dst.writeable()) ThrowInvalid("dst must be writable");
  const size_t d = static_cast<size_t>(dst.shape(1));
  RowRefs refs(buffers, seg, offsets, d * sizeof(float));
  const size_t m = refs.rows();
  if (static_cast<size_t>(dst.shape(0)) < m) ThrowInvalid("dst has fewer rows than there are references");
  py::array_t<float> norms(static_cast<py::ssize_t>(m));
  float* out = dst.mutable_data();
  float* n = norms.mutable_data();
  size_t written = 0;
  {
    py::gil_scoped_release release;
    std::vector<float> row(d);  // the row aligned (segment bytes need not be): UnitRows of one row, as replay's
    for (size_t i = 0; i < m; ++i) {
      if (d) std::memcpy(row.data(), refs.row(i), d * sizeof(float));
      written += chitta::util::UnitRows(row.data(), 1, d, out + written * d, n + i);
    }
  }
  return py::make_tuple(norms, written);
}

uint32_t CrcRowsAt(const py::tuple& buffers, const py::array& seg, const py::array& offsets, size_t width) {
  RowRefs refs(buffers, seg, offsets, width);
  uint32_t crc = 0;
  py::gil_scoped_release release;
  for (size_t i = 0; i < refs.rows(); ++i) crc = chitta::crc32c::Extend(crc, refs.row(i), width);
  return crc;
}

int64_t FirstDifferentRowAt(const py::tuple& buffers, const py::array& seg, const py::array& offsets,
                            const py::array& rows_in) {
  auto rows = Expect<uint8_t>(rows_in, 2, "rows");
  const size_t w = static_cast<size_t>(rows.shape(1));
  RowRefs refs(buffers, seg, offsets, w);
  if (static_cast<size_t>(rows.shape(0)) != refs.rows()) ThrowInvalid("rows must have one row per reference");
  const uint8_t* mine = rows.data();
  py::gil_scoped_release release;
  for (size_t i = 0; i < refs.rows(); ++i) {
    if (w && std::memcmp(refs.row(i), mine + i * w, w) != 0) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace

CHITTA_BIND(unit_rows) {
  m.def("_first_different_row_at", &FirstDifferentRowAt, py::arg("buffers"), py::arg("seg"), py::arg("offsets"),
        py::arg("rows"),
        "The first i whose bytes at buffers[seg[i]][offsets[i]:] differ from rows[i] (u8[m, w]); -1 if none.");
  m.def("_unit_rows_at", &UnitRowsAt, py::arg("buffers"), py::arg("seg"), py::arg("offsets"), py::arg("dst"),
        "As _unit_rows, reading row i (dst's width of float32s) at buffers[seg[i]][offsets[i]:].");
  m.def("_crc_rows_at", &CrcRowsAt, py::arg("buffers"), py::arg("seg"), py::arg("offsets"), py::arg("width"),
        "CRC-32C of the width bytes at buffers[seg[i]][offsets[i]:], row after row.");
  m.def("_copy_rows", &CopyRows, py::arg("src"), py::arg("offsets"), py::arg("dst"),
        "dst[i] = the len(dst[i]) bytes of src at offsets[i] (each checked to lie inside src).");
  m.def("_row_norms", &RowNorms, py::arg("rows"),
        "L2 norm of each row of a float32 C-order matrix (double accumulation in a fixed order).");
  m.def("_unit_rows", &UnitRowsInto, py::arg("src"), py::arg("dst"),
        "(norms, written): each row of src with a finite norm > 0, divided by it, packed into dst "
        "from row 0 in order.");
}

}  // namespace chitta_ext
