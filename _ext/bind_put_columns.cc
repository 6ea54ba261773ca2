// _ext/bind_put_columns.cc
// A run of PutPayload records as columns (chitta.ops.put_columns.PutColumns):
//   _core.decode_put_columns(result, start, end, fallback) -> tuple of the columns
// plus, per vector row, its segment index and the byte offset of its bytes in that
// segment file (~0 for a row the fallback decoded): where checkpoint state 10 refers.
// No Python object per plain row: texts go into one UTF-8 arena, labels become
// per-run codes, vectors of the run's common width one float32 matrix. A record
// csrc/wal/put_payload.h's ParsePut does not take (a meta map, an unusual
// encoding, damage), one with invalid UTF-8, tags or artifacts, is decoded by
// `fallback(record_index)` (msgspec: it raises CorruptionError for damage) and
// its columns are filled from that op. chitta/ops/__init__.py decode_put_columns wraps this.
#include <pybind11/numpy.h>

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "wal/put_payload.h"
#include "wal_py.h"

namespace chitta_ext {
namespace {

using chitta::wal::ReadBatch;

constexpr uint64_t kNoOffset = ~uint64_t{0};  // a vector whose bytes are not in the read segment (decoded by the fallback)
constexpr int kLabels = 5;  // kind, realm, session, source_tool, harness (put_columns.LABELS)

// One label field's distinct values in first-seen order (None included).
class LabelTable {
 public:
  // Runs repeat their labels: the previous row's value is checked first (one memcmp, no hash).
  bool Known(const std::optional<std::string_view>& s) const {
    return !s || (last_ >= 0 && *s == last_value_) || map_.count(*s) != 0;
  }
  uint32_t Code(const std::optional<std::string_view>& s) {
    if (!s) {
      if (none_ < 0) {
        none_ = static_cast<int64_t>(values_.size());
        values_.emplace_back(std::nullopt);
      }
      return static_cast<uint32_t>(none_);
    }
    if (last_ >= 0 && *s == last_value_) return static_cast<uint32_t>(last_);
    auto [it, fresh] = map_.emplace(*s, static_cast<uint32_t>(values_.size()));
    if (fresh) values_.emplace_back(*s);
    last_ = it->second;
    last_value_ = *s;
    return it->second;
  }
  py::tuple Values() const {
    py::tuple t(values_.size());
    for (size_t i = 0; i < values_.size(); ++i) {
      if (!values_[i]) {
        t[i] = py::none();
      } else {
        PyObject* o = PyUnicode_DecodeUTF8(values_[i]->data(), static_cast<Py_ssize_t>(values_[i]->size()), "strict");
        if (o == nullptr) throw py::error_already_set();
        t[i] = py::reinterpret_steal<py::object>(o);
      }
    }
    return t;
  }

 private:
  std::unordered_map<std::string_view, uint32_t> map_;  // views into the read buffer or live str objects
  std::vector<std::optional<std::string_view>> values_;
  int64_t none_ = -1;
  int64_t last_ = -1;  // the code of the last non-None value looked up
  std::string_view last_value_;
};

std::string_view StrView(PyObject* o) {
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(o, &n);  // cached in the str: lives as long as it
  if (p == nullptr) throw py::error_already_set();
  return {p, static_cast<size_t>(n)};
}

std::optional<std::string_view> OptStrView(PyObject* o) {
  if (o == Py_None) return std::nullopt;
  return StrView(o);
}

bool NonEmpty(const py::object& seq) { return PyObject_IsTrue(seq.ptr()) == 1; }

// A decoded op's fields, as views into it (the op is kept alive by the caller).
struct OpFields {
  chitta::wal::PutView v;
  bool extra = false;  // tags, meta or artifacts: always in extras
};

OpFields FromOp(const py::object& op) {
  OpFields f;
  f.v.id = op.attr("id").cast<uint64_t>();
  py::object text = op.attr("text");
  f.v.text = StrView(text.ptr());
  py::object kind = op.attr("kind");
  f.v.kind = StrView(kind.ptr());
  f.v.created_ms = op.attr("created_ms").cast<int64_t>();
  // The attribute objects are owned by the (immutable) op, so views into them outlive these handles.
  f.v.realm = OptStrView(op.attr("realm").ptr());
  f.v.session = OptStrView(op.attr("session").ptr());
  f.v.source_tool = OptStrView(op.attr("source_tool").ptr());
  f.v.harness = OptStrView(op.attr("harness").ptr());
  f.v.confidence = op.attr("confidence").cast<double>();
  f.v.strength = op.attr("strength").cast<double>();
  py::object emb = op.attr("embedding");
  if (!emb.is_none()) {
    char* p = nullptr;
    Py_ssize_t n = 0;
    if (PyBytes_AsStringAndSize(emb.ptr(), &p, &n) != 0) throw py::error_already_set();
    f.v.embedding = std::string_view(p, static_cast<size_t>(n));
  }
  f.v.written_ms = op.attr("written_ms").cast<int64_t>();
  f.extra = NonEmpty(op.attr("tags")) || !op.attr("meta").is_none() || NonEmpty(op.attr("artifacts"));
  return f;
}

template <typename T>
py::array_t<T> ToArray(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
  return a;
}

// The matrix sink(m, dim) gave, if it is one this decoder can write m rows of
// width dim into (float32, C order, writable); otherwise None.
py::object SinkMatrix(const py::object& sink, size_t m, size_t dim) {
  if (sink.is_none()) return py::none();
  py::object got = sink(m, dim);
  if (!py::isinstance<py::array>(got)) return py::none();
  auto a = py::reinterpret_borrow<py::array>(got);
  const bool fits = a.dtype().is(py::dtype::of<float>()) && a.ndim() == 2 &&
                    static_cast<size_t>(a.shape(0)) == m && static_cast<size_t>(a.shape(1)) == dim &&
                    (a.flags() & py::array::c_style) && a.writeable();
  return fits ? got : py::none();
}

py::tuple DecodePutColumns(const ReadBatch& b, size_t start, size_t end, py::object fallback, py::object sink) {
  if (start > end || end > b.records.size()) throw py::index_error("record range out of bounds");
  const size_t n = end - start;
  std::vector<uint64_t> ids(n);
  std::vector<int64_t> created(n), written(n), offsets(n + 1, 0);
  std::vector<double> confidence(n), strength(n);
  std::vector<uint32_t> codes[kLabels];
  for (auto& c : codes) c.resize(n);
  LabelTable tables[kLabels];
  std::vector<std::string_view> embs(n);  // data() == nullptr: no embedding
  std::vector<uint64_t> emb_at(n, kNoOffset);  // segment file offset of a row's embedding bytes
  std::vector<py::object> decoded(n);     // the fallback's op, for the rows it decoded
  std::vector<bool> extra(n, false);
  std::map<size_t, size_t> widths;         // embedding bytes -> rows
  std::string arena;
  size_t payload_bytes = 0;
  for (size_t i = start; i < end; ++i) payload_bytes += b.records[i].len;
  arena.reserve(payload_bytes);

  chitta::wal::PutView v;
  for (size_t row = 0; row < n; ++row) {
    const auto& r = b.records[start + row];
    bool native = chitta::wal::ParsePut(r.payload, r.len, &v) && v.tags.empty() &&
                  v.artifacts.empty() && chitta::wal::ValidUtf8(v.text);
    if (native) {
      const std::optional<std::string_view> labels[kLabels] = {v.kind, v.realm, v.session, v.source_tool, v.harness};
      for (int k = 0; k < kLabels && native; ++k) {
        if (!tables[k].Known(labels[k])) native = chitta::wal::ValidUtf8(*labels[k]);
      }
    }
    if (!native) {
      decoded[row] = fallback(start + row);  // raises for damage
      OpFields f = FromOp(decoded[row]);
      v = f.v;
      extra[row] = f.extra;
    }
    ids[row] = v.id;
    created[row] = v.created_ms;
    written[row] = v.written_ms;
    confidence[row] = v.confidence;
    strength[row] = v.strength;
    const std::optional<std::string_view> labels[kLabels] = {v.kind, v.realm, v.session, v.source_tool, v.harness};
    for (int k = 0; k < kLabels; ++k) codes[k][row] = tables[k].Code(labels[k]);
    arena.append(v.text.data(), v.text.size());
    offsets[row + 1] = static_cast<int64_t>(arena.size());
    if (v.embedding) {
      embs[row] = v.embedding->data() != nullptr ? *v.embedding : std::string_view("", 0);
      const auto* e = reinterpret_cast<const uint8_t*>(embs[row].data());
      if (native && e >= r.payload && e + embs[row].size() <= r.payload + r.len) {
        emb_at[row] = r.payload_at + static_cast<uint64_t>(e - r.payload);
      }
      const size_t w = v.embedding->size();
      if (w > 0 && w % 4 == 0) ++widths[w];
    }
  }

  // The common width: the most frequent whole-float32 width; ties go to the wider.
  size_t width = 0, best = 0;
  for (const auto& [w, count] : widths) {
    if (count >= best) width = w, best = count;
  }
  std::vector<int64_t> vector_rows;
  std::vector<uint64_t> vector_at;
  std::vector<uint32_t> vector_seg;
  for (size_t row = 0; row < n; ++row) {
    if (embs[row].data() == nullptr) continue;
    if (width != 0 && embs[row].size() == width) {
      vector_rows.push_back(static_cast<int64_t>(row));
      vector_at.push_back(emb_at[row]);
      vector_seg.push_back(b.records[start + row].segment);
    } else {
      extra[row] = true;  // an odd vector: the whole op goes to extras
    }
  }
  const size_t dim = width / 4;
  py::object vectors = vector_rows.empty() ? py::none() : SinkMatrix(sink, vector_rows.size(), dim);
  if (vectors.is_none()) {
    vectors = py::array_t<float>(std::vector<py::ssize_t>{static_cast<py::ssize_t>(vector_rows.empty() ? 0 : vector_rows.size()),
                                                          static_cast<py::ssize_t>(vector_rows.empty() ? 0 : dim)});
  }
  if (!vector_rows.empty()) {
    auto* out = static_cast<char*>(py::reinterpret_borrow<py::array>(vectors).mutable_data());
    for (size_t j = 0; j < vector_rows.size(); ++j) {  // little-endian host: the bytes are the floats
      std::memcpy(out + j * width, embs[static_cast<size_t>(vector_rows[j])].data(), width);
    }
  }
  py::dict extras;
  for (size_t row = 0; row < n; ++row) {
    if (!extra[row]) continue;
    if (!decoded[row]) decoded[row] = fallback(start + row);
    extras[py::int_(row)] = decoded[row];
  }
  py::list label_codes, label_values;
  for (int k = 0; k < kLabels; ++k) {
    label_codes.append(ToArray(codes[k]));
    label_values.append(tables[k].Values());
  }
  py::bytes text_arena(arena.data(), arena.size());
  return py::make_tuple(ToArray(ids), ToArray(created), ToArray(written), ToArray(confidence), ToArray(strength),
                        label_codes, label_values, text_arena, ToArray(offsets), ToArray(vector_rows), vectors,
                        extras, ToArray(vector_seg), ToArray(vector_at));
}

}  // namespace

CHITTA_BIND(put_columns) {
  static_assert(sizeof(float) == 4, "float32");
  m.def("decode_put_columns", &DecodePutColumns, py::arg("result"), py::arg("start"), py::arg("end"),
        py::arg("fallback"), py::arg("sink") = py::none(),
        "PutPayload records [start, end) of a ReadResult as the columns of a PutColumns (see "
        "chitta.ops.decode_put_columns); fallback(record_index) -> PutPayload decodes the records "
        "the native parser does not take; sink(m, dim), if given, may return the float32 (m, dim) "
        "matrix to write the vectors into (returned as the vectors column itself).");
}

}  // namespace chitta_ext
