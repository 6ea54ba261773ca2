// _ext/bind_memories_build.cc
// chitta._core._build_memories: the Memory objects of some rows of the
// memories organ's columns (chitta/organs/memories_store.py), built in one
// call: what MemoriesOrgan.memories did per row in Python (a tuple of twenty
// values from the columns, label tables, text arena and per-row dicts, then
// chitta.model.memory_of). Same values, same types: ints and floats as
// ndarray.tolist() gives them, texts decoded from the arena as strict UTF-8
// (or the row's changed text), a copy of the meta dict, the embedding as a
// fresh float32 array (a row of the vector matrix or of the checkpoint's base
// matrix; the caller passes the others, e.g. odd widths, in `extra`: row ->
// embedding). Recall builds the memories of the hits it returns with it.
//
// No Python code runs during the call (the GIL is held throughout), and the
// text arena, a bytearray the organ grows in place, is read without holding a
// buffer export on it (an export would make a concurrent append fail).
#include <pybind11/numpy.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "registry.h"

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
                         (kind == 'b' && b_.itemsize == 1);
    if (b_.ndim != 1 || !ok_kind || b_.itemsize != itemsize || !PyBuffer_IsContiguous(&b_, 'C')) {
      PyErr_Format(PyExc_TypeError, "%s must be a 1-D contiguous column of the organ's dtype", name);
      return false;
    }
    return true;
  }
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

constexpr int kCols = 9;  // created, written, updated, last_access, confidence, strength, decay, tier, access
constexpr int kLabels = 5;  // kind, realm, session, source_tool, harness
constexpr int kSlots = 20;

PyObject* Build(PyObject* const* a) {
  PyObject *cls = a[0], *slots = a[1], *ids = a[2], *rows_obj = a[3], *cols = a[4], *labels = a[5];
  PyObject *arena_obj = a[6], *off_obj = a[7], *texts = a[8], *tags = a[9], *metas = a[10], *arts = a[11];
  PyObject *vec_obj = a[12], *vecs_obj = a[13], *base_obj = a[14], *extra = a[15];
  if (!PyType_Check(cls) || !PyTuple_Check(slots) || PyTuple_GET_SIZE(slots) != kSlots || !PyList_Check(ids) ||
      !PyTuple_Check(cols) || PyTuple_GET_SIZE(cols) != kCols || !PyTuple_Check(labels) ||
      PyTuple_GET_SIZE(labels) != kLabels || !PyDict_Check(texts) || !PyDict_Check(tags) || !PyDict_Check(metas) ||
      !PyDict_Check(arts) || !PyDict_Check(extra) || !(PyByteArray_Check(arena_obj) || PyBytes_Check(arena_obj))) {
    PyErr_SetString(PyExc_TypeError, "_build_memories: arguments of the wrong kind");
    return nullptr;
  }
  View rows, off, vec, vecs, base;
  if (!rows.Column(rows_obj, 'i', 8, "rows") || !off.Column(off_obj, 'i', 8, "text offsets") ||
      !vec.Column(vec_obj, 'i', 8, "vec")) {
    return nullptr;
  }
  const bool have_vecs = vecs_obj != Py_None, have_base = base_obj != Py_None;
  if ((have_vecs && !vecs.Matrix(vecs_obj, "vecs")) || (have_base && !base.Matrix(base_obj, "base"))) return nullptr;
  const Py_ssize_t m = rows.len();
  if (PyList_GET_SIZE(ids) != m) {
    PyErr_SetString(PyExc_TypeError, "one id per row");
    return nullptr;
  }
  View col[kCols], codes[kLabels];
  PyObject* values[kLabels];
  static const char* kColNames[kCols] = {"created", "written", "updated", "last_access", "confidence",
                                         "strength", "decay",   "tier",    "access"};
  Py_ssize_t n_rows = vec.len();
  for (int c = 0; c < kCols; ++c) {
    const bool real = c >= 4 && c <= 6;
    if (!col[c].Column(PyTuple_GET_ITEM(cols, c), real ? 'f' : 'i', 8, kColNames[c])) return nullptr;
    n_rows = std::min(n_rows, col[c].len());
  }
  for (int l = 0; l < kLabels; ++l) {
    PyObject* pair = PyTuple_GET_ITEM(labels, l);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyList_Check(PyTuple_GET_ITEM(pair, 1))) {
      PyErr_SetString(PyExc_TypeError, "labels: (codes, values list) pairs");
      return nullptr;
    }
    if (!codes[l].Column(PyTuple_GET_ITEM(pair, 0), 'u', 4, "label codes")) return nullptr;
    values[l] = PyTuple_GET_ITEM(pair, 1);
    n_rows = std::min(n_rows, codes[l].len());
  }
  const int64_t* row_of = rows.data<int64_t>();
  for (Py_ssize_t j = 0; j < m; ++j) {
    if (row_of[j] < 0 || row_of[j] >= n_rows || row_of[j] + 1 >= off.len()) {
      PyErr_SetString(PyExc_IndexError, "row past the organ's columns");
      return nullptr;
    }
  }
  PyObject* out = PyList_New(m);
  if (out == nullptr) return nullptr;
  PyObject* empty = PyTuple_New(0);
  const int64_t* offsets = off.data<int64_t>();
  const bool is_bytearray = PyByteArray_Check(arena_obj);
  for (Py_ssize_t j = 0; j < m; ++j) {
    const int64_t row = row_of[j];
    PyObject* v[kSlots] = {};
    PyObject* key = PyLong_FromLongLong(row);
    bool ok = key != nullptr;
    if (ok) {
      v[0] = PyList_GET_ITEM(ids, j);
      Py_INCREF(v[0]);
      // text: the changed one, else the put's from the arena
      PyObject* changed = PyDict_GetItemWithError(texts, key);
      if (changed != nullptr) {
        Py_INCREF(changed);
        v[1] = changed;
      } else if (!PyErr_Occurred()) {
        const int64_t lo = offsets[row], hi = offsets[row + 1];
        // Read the arena's pointer and size now: nothing between here and the decode can run Python code.
        const char* text_bytes = is_bytearray ? PyByteArray_AS_STRING(arena_obj) : PyBytes_AS_STRING(arena_obj);
        const Py_ssize_t size = is_bytearray ? PyByteArray_GET_SIZE(arena_obj) : PyBytes_GET_SIZE(arena_obj);
        if (lo < 0 || hi < lo || hi > size) {
          PyErr_SetString(PyExc_IndexError, "text offsets past the arena");
        } else {
          v[1] = PyUnicode_DecodeUTF8(text_bytes + lo, hi - lo, "strict");
        }
      }
      ok = v[1] != nullptr;
    }
    for (int l = 0; ok && l < kLabels; ++l) {
      const uint32_t code = codes[l].data<uint32_t>()[row];
      if (code >= static_cast<uint64_t>(PyList_GET_SIZE(values[l]))) {
        PyErr_SetString(PyExc_IndexError, "label code past its table");
        ok = false;
        break;
      }
      v[2 + l] = PyList_GET_ITEM(values[l], code);
      Py_INCREF(v[2 + l]);
    }
    if (ok) ok = (v[7] = DictGet(tags, key, empty)) != nullptr;
    if (ok) {
      v[8] = PyFloat_FromDouble(col[4].data<double>()[row]);   // confidence
      v[9] = PyFloat_FromDouble(col[5].data<double>()[row]);   // strength
      v[10] = PyFloat_FromDouble(col[6].data<double>()[row]);  // decay_rate
      v[11] = PyLong_FromLongLong(col[7].data<int64_t>()[row]);  // tier
      const int64_t created = col[0].data<int64_t>()[row];
      v[12] = PyLong_FromLongLong(created);
      v[13] = PyLong_FromLongLong(col[2].data<int64_t>()[row]);  // updated
      v[14] = PyLong_FromLongLong(col[3].data<int64_t>()[row]);  // last_access
      v[15] = PyLong_FromLongLong(col[8].data<int64_t>()[row]);  // access
      const int64_t written = col[1].data<int64_t>()[row];
      v[19] = PyLong_FromLongLong(written != 0 ? written : created);
      for (int s : {8, 9, 10, 11, 12, 13, 14, 15, 19}) ok = ok && v[s] != nullptr;
    }
    if (ok) {  // meta: a copy of the dict, or None
      PyObject* meta = PyDict_GetItemWithError(metas, key);
      if (meta == nullptr) {
        if (!PyErr_Occurred()) {
          v[16] = Py_None;
          Py_INCREF(Py_None);
        }
      } else {
        if (meta == Py_None) {
          Py_INCREF(Py_None);
          v[16] = Py_None;
        } else {
          v[16] = PyDict_Check(meta) ? PyDict_Copy(meta)
                                     : PyObject_CallOneArg(reinterpret_cast<PyObject*>(&PyDict_Type), meta);
        }
      }
      ok = v[16] != nullptr;
    }
    if (ok) {  // embedding: the caller's for this row, else a copy of its matrix row
      const int64_t vr = vec.data<int64_t>()[row];
      const View* mat = vr >= 0 ? (have_vecs ? &vecs : nullptr) : (vr <= -2 && have_base ? &base : nullptr);
      const int64_t mrow = vr >= 0 ? vr : -2 - vr;
      PyObject* given = PyDict_GetItemWithError(extra, key);
      if (given != nullptr) {
        Py_INCREF(given);
        v[17] = given;
      } else if (PyErr_Occurred()) {
        // v[17] stays null: the error goes up
      } else if (vr != -1 && mat != nullptr && mrow < mat->len()) {
        const Py_ssize_t dim = mat->cols();
        try {
          py::array_t<float> copy(dim);
          std::memcpy(copy.mutable_data(), mat->data<float>() + mrow * dim, static_cast<size_t>(dim) * sizeof(float));
          v[17] = copy.release().ptr();
        } catch (const std::exception&) {
          PyErr_SetString(PyExc_MemoryError, "embedding copy");
        }
      } else {
        PyErr_SetString(PyExc_IndexError, "a row's vector is neither in a matrix nor given");
      }
      ok = v[17] != nullptr;
    }
    if (ok) ok = (v[18] = DictGet(arts, key, empty)) != nullptr;
    PyObject* memory = nullptr;
    if (ok) {
      auto* type = reinterpret_cast<PyTypeObject*>(cls);
      memory = type->tp_alloc(type, 0);
      for (int s = 0; memory != nullptr && s < kSlots; ++s) {
        PyObject* descr = PyTuple_GET_ITEM(slots, s);
        descrsetfunc set = Py_TYPE(descr)->tp_descr_set;
        if (set == nullptr || set(descr, memory, v[s]) < 0) {
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
      return nullptr;
    }
    PyList_SET_ITEM(out, j, memory);
  }
  Py_DECREF(empty);
  return out;
}

PyObject* BuildPy(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 16) {
    PyErr_SetString(PyExc_TypeError, "_build_memories takes 16 arguments");
    return nullptr;
  }
  return Build(args);
}

PyMethodDef kBuild = {"_build_memories", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(BuildPy)),
                      METH_FASTCALL,
                      "_build_memories(cls, slots, ids, rows, cols, labels, arena, text_off, texts, tags, meta, "
                      "artifacts, vec, vecs, base, extra): Memory objects of organ rows "
                      "(chitta.organs.memories.MemoriesOrgan.memories)."};

}  // namespace

CHITTA_BIND(memories_build) {
  PyObject* fn = PyCFunction_NewEx(&kBuild, nullptr, m.attr("__name__").ptr());
  if (fn == nullptr) throw py::error_already_set();
  m.add_object("_build_memories", py::reinterpret_steal<py::object>(fn));
}

}  // namespace chitta_ext
