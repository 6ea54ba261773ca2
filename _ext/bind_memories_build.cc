// _ext/bind_memories_build.cc
// chitta._core._build_memories: the Memory objects of some ids of the
// memories organ (chitta/organs/memories_store.py: its id -> row map and
// columns), built in one call, None where an id is not live: what
// MemoriesOrgan.memories did per id in Python (a row lookup, a tuple of twenty
// values from the columns, label tables, text arena and per-row dicts, then
// chitta.model.memory_of). Same values, same types: ints and floats as
// ndarray.tolist() gives them, texts decoded from the arena as strict UTF-8
// (or the row's changed text), a copy of the meta dict, the embedding as a
// fresh float32 array (a row of the vector matrix, of the checkpoint's base
// matrix or its rows mapped in place from the log, or the row's odd-width
// little-endian bytes, as np.frombuffer(blob,
// "<f4").astype(np.float32) gives). Recall builds the memories of the hits it
// returns with it.
//
// No Python code runs during the call (the GIL is held throughout), and the
// text arena, a bytearray the organ grows in place, is read without holding a
// buffer export on it (an export would make a concurrent append fail).
#include <pybind11/numpy.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "registry.h"
#include "util/row_map.h"

namespace chitta_ext {
namespace {

// A read-only buffer view (numpy array or bytearray), released on scope exit.
class View {
 public:
  View() { std::memset(&b_, 0, sizeof(b_)); }
  ~View() {
    if (held_) PyBuffer_Release(&b_);
  }
  View(const View&) = delete;
  View& operator=(const View&) = delete;
  // A 1-D C-contiguous buffer of items of `itemsize` bytes (format `kind`).
  bool Column(PyObject* obj, char kind, Py_ssize_t itemsize, const char* name) {
    if (!Get(obj, name)) return false;
    const char* fmt = b_.format != nullptr ? b_.format : "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@') ++fmt;
    const bool ok_kind = (kind == 'i' && (*fmt == 'q' || *fmt == 'l') && b_.itemsize == 8) ||
                         (kind == 'f' && *fmt == 'd') || (kind == 'u' && (*fmt == 'I' || *fmt == 'L') && b_.itemsize == 4) ||
                         (kind == 'U' && (*fmt == 'Q' || *fmt == 'L') && b_.itemsize == 8) ||
                         (kind == 'b' && b_.itemsize == 1);
    if (b_.ndim != 1 || !ok_kind || b_.itemsize != itemsize || !PyBuffer_IsContiguous(&b_, 'C')) {
      PyErr_Format(PyExc_TypeError, "%s must be a 1-D contiguous column of the organ's dtype", name);
      return false;
    }
    return true;
  }
  // Any buffer, read as bytes.
  bool Bytes(PyObject* obj, const char* name) { return Get(obj, name); }
  // A 2-D C-contiguous float32 matrix.
  bool Matrix(PyObject* obj, const char* name) {
    if (!Get(obj, name)) return false;
    const char* fmt = b_.format != nullptr ? b_.format : "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@') ++fmt;
    if (b_.ndim != 2 || *fmt != 'f' || b_.itemsize != 4 || !PyBuffer_IsContiguous(&b_, 'C')) {
      PyErr_Format(PyExc_TypeError, "%s must be a 2-D contiguous float32 matrix", name);
      return false;
    }
    return true;
  }
  template <typename T>
  const T* data() const { return static_cast<const T*>(b_.buf); }
  Py_ssize_t len() const { return b_.ndim >= 1 ? b_.shape[0] : b_.len; }
  Py_ssize_t cols() const { return b_.ndim == 2 ? b_.shape[1] : 0; }
  Py_ssize_t bytes() const { return b_.len; }

 private:
  bool Get(PyObject* obj, const char* name) {
    if (PyObject_GetBuffer(obj, &b_, PyBUF_RECORDS_RO) != 0) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "%s must support the buffer protocol", name);
      return false;
    }
    held_ = true;
    return true;
  }
  Py_buffer b_;
  bool held_ = false;
};

// dict.get(key, default) with a new reference; key is an int.
PyObject* DictGet(PyObject* dict, PyObject* key, PyObject* fallback) {
  PyObject* v = PyDict_GetItemWithError(dict, key);  // borrowed
  if (v == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    v = fallback;
  }
  Py_INCREF(v);
  return v;
}

// A fresh 1-D float32 array of n floats copied from little-endian bytes (the hosts
// chitta builds for are little-endian; numpy reads "<f4" the same way there).
PyObject* FloatCopy(const char* src, Py_ssize_t n) {
  try {
    py::array_t<float> copy(n);
    std::memcpy(copy.mutable_data(), src, static_cast<size_t>(n) * sizeof(float));
    return copy.release().ptr();
  } catch (const std::exception&) {
    PyErr_SetString(PyExc_MemoryError, "embedding copy");
    return nullptr;
  }
}

constexpr int kCols = 9;  // created, written, updated, last_access, confidence, strength, decay, tier, access
constexpr int kLabels = 5;  // kind, realm, session, source_tool, harness
// The Memory fields this builder fills, by name: Build matches each of Memory's slot
// descriptors (chitta.model._MEMORY_SLOTS) to one of these by its __name__, so the
// dataclass may reorder its fields; a field missing here (or here but not there) is refused.
enum Slot : int {
  kId, kText, kKind, kRealm, kSession, kSourceTool, kHarness, kTags, kConfidence, kStrength, kDecayRate,
  kTier, kCreated, kUpdated, kLastAccess, kAccess, kMeta, kEmbedding, kArtifacts, kWritten, kSlots
};
constexpr const char* kSlotNames[kSlots] = {
    "id", "text", "kind", "realm", "session", "source_tool", "harness", "tags", "confidence", "strength",
    "decay_rate", "tier", "created_ms", "updated_ms", "last_access_ms", "access_count", "meta", "embedding",
    "artifacts", "written_ms"};
constexpr Slot kLabelSlots[kLabels] = {kKind, kRealm, kSession, kSourceTool, kHarness};

// order[s]: which of this builder's values goes into Memory's slot s (matched by name).
bool SlotOrder(PyObject* slots, int order[kSlots]) {
  bool seen[kSlots] = {};
  for (int s = 0; s < kSlots; ++s) {
    PyObject* name = PyObject_GetAttrString(PyTuple_GET_ITEM(slots, s), "__name__");
    const char* text = name == nullptr ? nullptr : PyUnicode_AsUTF8(name);
    int found = -1;
    for (int k = 0; text != nullptr && k < kSlots; ++k) {
      if (std::strcmp(text, kSlotNames[k]) == 0) found = k;
    }
    if (found < 0 || seen[found]) {
      if (!PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "_build_memories: Memory field %s is not one this builder fills",
                     text == nullptr ? "?" : text);
      }
      Py_XDECREF(name);
      return false;
    }
    Py_DECREF(name);
    seen[found] = true;
    order[s] = found;
  }
  return true;
}

// The checkpoint's vectors read in place (MappedVectors.native(): (buffers, seg u32[n],
// offsets u64[n], dim)): base row r is the dim float32s at buffers[seg[r]][offsets[r]:].
struct MappedBase {
  bool on = false;
  Py_ssize_t dim = 0;
  std::vector<std::unique_ptr<View>> bufs;
  View seg, at;
  bool Open(PyObject* t) {
    if (PyTuple_GET_SIZE(t) != 4 || !PyTuple_Check(PyTuple_GET_ITEM(t, 0))) {
      PyErr_SetString(PyExc_TypeError, "base must be a matrix or (buffers, seg, offsets, dim)");
      return false;
    }
    PyObject* buffers = PyTuple_GET_ITEM(t, 0);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(buffers); ++i) {
      bufs.push_back(std::make_unique<View>());
      if (!bufs.back()->Bytes(PyTuple_GET_ITEM(buffers, i), "a mapped segment")) return false;
    }
    if (!seg.Column(PyTuple_GET_ITEM(t, 1), 'u', 4, "base seg") || !at.Column(PyTuple_GET_ITEM(t, 2), 'U', 8, "base offsets")) {
      return false;
    }
    dim = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, 3));
    if (dim < 0 || PyErr_Occurred()) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "base dim must be >= 0");
      return false;
    }
    on = true;
    return true;
  }
  // Row r's bytes, checked to lie inside its buffer; nullptr with IndexError set otherwise.
  const char* Row(int64_t r) const {
    if (r < 0 || r >= seg.len() || r >= at.len()) {
      PyErr_SetString(PyExc_IndexError, "a vector row past its references");
      return nullptr;
    }
    const uint32_t k = seg.data<uint32_t>()[r];
    const uint64_t off = at.data<uint64_t>()[r];
    const uint64_t need = static_cast<uint64_t>(dim) * 4;
    if (k >= bufs.size() || off > static_cast<uint64_t>(bufs[k]->bytes()) ||
        static_cast<uint64_t>(bufs[k]->bytes()) - off < need) {
      PyErr_SetString(PyExc_IndexError, "a vector reference past its segment");
      return nullptr;
    }
    return bufs[k]->data<char>() + off;
  }
};

PyObject* Build(PyObject* const* a) {
  PyObject *cls = a[0], *slots = a[1], *ids = a[2], *map_obj = a[3], *dead_obj = a[4], *cols = a[5];
  PyObject *labels = a[6], *arena_obj = a[7], *off_obj = a[8], *texts = a[9], *tags = a[10], *metas = a[11];
  PyObject *arts = a[12], *vec_obj = a[13], *vecs_obj = a[14], *base_obj = a[15], *odd = a[16];
  if (!PyType_Check(cls) || !PyTuple_Check(slots) || PyTuple_GET_SIZE(slots) != kSlots || !PyTuple_Check(cols) ||
      PyTuple_GET_SIZE(cols) != kCols || !PyTuple_Check(labels) || PyTuple_GET_SIZE(labels) != kLabels ||
      !PyDict_Check(texts) || !PyDict_Check(tags) || !PyDict_Check(metas) || !PyDict_Check(arts) ||
      !PyDict_Check(odd) || !(PyByteArray_Check(arena_obj) || PyBytes_Check(arena_obj))) {
    PyErr_SetString(PyExc_TypeError, "_build_memories: arguments of the wrong kind");
    return nullptr;
  }
  int order[kSlots];
  if (!SlotOrder(slots, order)) return nullptr;
  const chitta::util::RowMap* map = nullptr;
  try {
    map = &py::handle(map_obj).cast<const chitta::util::RowMap&>();
  } catch (const std::exception&) {
    PyErr_SetString(PyExc_TypeError, "map must be a chitta._core.RowMap");
    return nullptr;
  }
  View dead, off, vec, vecs, base;
  MappedBase mapped;
  if (!dead.Column(dead_obj, 'b', 1, "dead") || !off.Column(off_obj, 'i', 8, "text offsets") ||
      !vec.Column(vec_obj, 'i', 8, "vec") || !vecs.Matrix(vecs_obj, "vecs") ||
      !(PyTuple_Check(base_obj) ? mapped.Open(base_obj) : base.Matrix(base_obj, "base"))) {
    return nullptr;
  }
  PyObject* seq = PySequence_Fast(ids, "ids must be a sequence of ints");
  if (seq == nullptr) return nullptr;
  const Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
  View col[kCols], codes[kLabels];
  PyObject* values[kLabels];
  static const char* kColNames[kCols] = {"created", "written", "updated", "last_access", "confidence",
                                         "strength", "decay",   "tier",    "access"};
  Py_ssize_t n_rows = std::min(vec.len(), dead.len());
  for (int c = 0; c < kCols; ++c) {
    const bool real = c >= 4 && c <= 6;
    if (!col[c].Column(PyTuple_GET_ITEM(cols, c), real ? 'f' : 'i', 8, kColNames[c])) {
      Py_DECREF(seq);
      return nullptr;
    }
    n_rows = std::min(n_rows, col[c].len());
  }
  for (int l = 0; l < kLabels; ++l) {
    PyObject* pair = PyTuple_GET_ITEM(labels, l);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyList_Check(PyTuple_GET_ITEM(pair, 1))) {
      PyErr_SetString(PyExc_TypeError, "labels: (codes, values list) pairs");
      Py_DECREF(seq);
      return nullptr;
    }
    if (!codes[l].Column(PyTuple_GET_ITEM(pair, 0), 'u', 4, "label codes")) {
      Py_DECREF(seq);
      return nullptr;
    }
    values[l] = PyTuple_GET_ITEM(pair, 1);
    n_rows = std::min(n_rows, codes[l].len());
  }
  PyObject* out = PyList_New(m);
  if (out == nullptr) {
    Py_DECREF(seq);
    return nullptr;
  }
  PyObject* empty = PyTuple_New(0);
  const uint8_t* is_dead = dead.data<uint8_t>();
  const int64_t* offsets = off.data<int64_t>();
  const bool is_bytearray = PyByteArray_Check(arena_obj);
  for (Py_ssize_t j = 0; j < m; ++j) {
    PyObject* v[kSlots] = {};
    v[kId] = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, j));  // the id, as int(ids[j])
    if (v[kId] == nullptr) {
      Py_DECREF(empty);
      Py_DECREF(out);
      Py_DECREF(seq);
      return nullptr;
    }
    const unsigned long long id = PyLong_AsUnsignedLongLong(v[kId]);
    if (id == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {  // negative or past 2**64 - 1
      Py_DECREF(v[kId]);
      Py_DECREF(empty);
      Py_DECREF(out);
      Py_DECREF(seq);
      return nullptr;
    }
    const int64_t row = map->Row(id);
    if (row >= n_rows || (row >= 0 && row + 1 >= off.len())) {
      Py_DECREF(v[kId]);
      PyErr_SetString(PyExc_IndexError, "row past the organ's columns");
      Py_DECREF(empty);
      Py_DECREF(out);
      Py_DECREF(seq);
      return nullptr;
    }
    if (row < 0 || is_dead[row]) {  // not live: None
      Py_DECREF(v[kId]);
      Py_INCREF(Py_None);
      PyList_SET_ITEM(out, j, Py_None);
      continue;
    }
    PyObject* key = PyLong_FromLongLong(row);
    bool ok = key != nullptr;
    if (ok) {
      // text: the changed one, else the put's from the arena
      PyObject* changed = PyDict_GetItemWithError(texts, key);
      if (changed != nullptr) {
        Py_INCREF(changed);
        v[kText] = changed;
      } else if (!PyErr_Occurred()) {
        const int64_t lo = offsets[row], hi = offsets[row + 1];
        // Read the arena's pointer and size now: nothing between here and the decode can run Python code.
        const char* text_bytes = is_bytearray ? PyByteArray_AS_STRING(arena_obj) : PyBytes_AS_STRING(arena_obj);
        const Py_ssize_t size = is_bytearray ? PyByteArray_GET_SIZE(arena_obj) : PyBytes_GET_SIZE(arena_obj);
        if (lo < 0 || hi < lo || hi > size) {
          PyErr_SetString(PyExc_IndexError, "text offsets past the arena");
        } else {
          v[kText] = PyUnicode_DecodeUTF8(text_bytes + lo, hi - lo, "strict");
        }
      }
      ok = v[kText] != nullptr;
    }
    for (int l = 0; ok && l < kLabels; ++l) {
      const uint32_t code = codes[l].data<uint32_t>()[row];
      if (code >= static_cast<uint64_t>(PyList_GET_SIZE(values[l]))) {
        PyErr_SetString(PyExc_IndexError, "label code past its table");
        ok = false;
        break;
      }
      v[kLabelSlots[l]] = PyList_GET_ITEM(values[l], code);
      Py_INCREF(v[kLabelSlots[l]]);
    }
    if (ok) ok = (v[kTags] = DictGet(tags, key, empty)) != nullptr;
    if (ok) {
      v[kConfidence] = PyFloat_FromDouble(col[4].data<double>()[row]);   // confidence
      v[kStrength] = PyFloat_FromDouble(col[5].data<double>()[row]);   // strength
      v[kDecayRate] = PyFloat_FromDouble(col[6].data<double>()[row]);  // decay_rate
      v[kTier] = PyLong_FromLongLong(col[7].data<int64_t>()[row]);  // tier
      const int64_t created = col[0].data<int64_t>()[row];
      v[kCreated] = PyLong_FromLongLong(created);
      v[kUpdated] = PyLong_FromLongLong(col[2].data<int64_t>()[row]);  // updated
      v[kLastAccess] = PyLong_FromLongLong(col[3].data<int64_t>()[row]);  // last_access
      v[kAccess] = PyLong_FromLongLong(col[8].data<int64_t>()[row]);  // access
      const int64_t written = col[1].data<int64_t>()[row];
      v[kWritten] = PyLong_FromLongLong(written != 0 ? written : created);
      for (int s : {kConfidence, kStrength, kDecayRate, kTier, kCreated, kUpdated, kLastAccess, kAccess, kWritten}) {
        ok = ok && v[s] != nullptr;
      }
    }
    if (ok) {  // meta: a copy of the dict, or None
      PyObject* meta = PyDict_GetItemWithError(metas, key);
      if (meta == nullptr) {
        if (!PyErr_Occurred()) {
          v[kMeta] = Py_None;
          Py_INCREF(Py_None);
        }
      } else {
        if (meta == Py_None) {
          Py_INCREF(Py_None);
          v[kMeta] = Py_None;
        } else {
          v[kMeta] = PyDict_Check(meta) ? PyDict_Copy(meta)
                                     : PyObject_CallOneArg(reinterpret_cast<PyObject*>(&PyDict_Type), meta);
        }
      }
      ok = v[kMeta] != nullptr;
    }
    if (ok) {  // embedding: a copy of its matrix row, or of its odd-width bytes, or None
      const int64_t vr = vec.data<int64_t>()[row];
      if (vr == -1) {
        PyObject* blob = PyDict_GetItemWithError(odd, key);
        if (blob == nullptr) {
          if (!PyErr_Occurred()) {
            Py_INCREF(Py_None);
            v[kEmbedding] = Py_None;
          }
        } else if (!PyBytes_Check(blob)) {
          PyErr_SetString(PyExc_TypeError, "an odd vector must be bytes");
        } else if (PyBytes_GET_SIZE(blob) % 4 != 0) {
          PyErr_SetString(PyExc_ValueError, "buffer size must be a multiple of element size");
        } else {
          v[kEmbedding] = FloatCopy(PyBytes_AS_STRING(blob), PyBytes_GET_SIZE(blob) / 4);
        }
      } else {
        const View& mat = vr >= 0 ? vecs : base;
        const int64_t mrow = vr >= 0 ? vr : -2 - vr;
        if (vr < 0 && mapped.on) {
          const char* at = mapped.Row(mrow);
          if (at != nullptr) v[kEmbedding] = FloatCopy(at, mapped.dim);
        } else if (mrow >= mat.len()) {
          PyErr_SetString(PyExc_IndexError, "a vector row past its matrix");
        } else {
          v[kEmbedding] = FloatCopy(mat.data<char>() + mrow * mat.cols() * 4, mat.cols());
        }
      }
      ok = v[kEmbedding] != nullptr;
    }
    if (ok) ok = (v[kArtifacts] = DictGet(arts, key, empty)) != nullptr;
    PyObject* memory = nullptr;
    if (ok) {
      auto* type = reinterpret_cast<PyTypeObject*>(cls);
      memory = type->tp_alloc(type, 0);
      for (int s = 0; memory != nullptr && s < kSlots; ++s) {
        PyObject* descr = PyTuple_GET_ITEM(slots, s);
        descrsetfunc set = Py_TYPE(descr)->tp_descr_set;
        if (set == nullptr || set(descr, memory, v[order[s]]) < 0) {
          if (set == nullptr) PyErr_SetString(PyExc_TypeError, "a descriptor cannot be set");
          Py_CLEAR(memory);
        }
      }
    }
    for (PyObject* x : v) Py_XDECREF(x);
    Py_XDECREF(key);
    if (memory == nullptr) {
      Py_DECREF(empty);
      Py_DECREF(out);
      Py_DECREF(seq);
      return nullptr;
    }
    PyList_SET_ITEM(out, j, memory);
  }
  Py_DECREF(empty);
  Py_DECREF(seq);
  return out;
}

PyObject* BuildPy(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 17) {
    PyErr_SetString(PyExc_TypeError, "_build_memories takes 17 arguments");
    return nullptr;
  }
  return Build(args);
}

PyMethodDef kBuild = {"_build_memories", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(BuildPy)),
                      METH_FASTCALL,
                      "_build_memories(cls, slots, ids, map, dead, cols, labels, arena, text_off, texts, tags, meta, "
                      "artifacts, vec, vecs, base, odd): the Memory of each id, None where not live "
                      "(chitta.organs.memories.MemoriesOrgan.memories)."};

}  // namespace

CHITTA_BIND(memories_build) {
  PyObject* fn = PyCFunction_NewEx(&kBuild, nullptr, m.attr("__name__").ptr());
  if (fn == nullptr) throw py::error_already_set();
  m.add_object("_build_memories", py::reinterpret_steal<py::object>(fn));
}

}  // namespace chitta_ext
