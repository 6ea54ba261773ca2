// _ext/bind_wal_put.cc
// PutPayload fast paths for Field.remember and replay, in plain CPython calls
// (a pybind11 call costs more than the work here). Conversion only: the
// encoding and parsing live in csrc/wal/put_payload.*.
//   _core.encode_put(...)          -> bytes (the same bytes as chitta.ops.encode)
//   SegmentLog.put_appender()(...) -> seqno (encode + append, GIL released for the write)
//   ReadResult.decode_puts(...)    -> PutPayload structs built without msgspec
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "wal/put_payload.h"
#include "wal_py.h"  // Python.h first

#include <structmember.h>  // T_OBJECT_EX

namespace chitta_ext {
namespace {

using chitta::wal::PutFields;

PyObject* SetInvalid(const std::string& message) {
  PyObject* mod = PyImport_ImportModule("chitta.errors");
  if (mod == nullptr) return nullptr;
  PyObject* cls = PyObject_GetAttrString(mod, "InvalidArgument");
  Py_DECREF(mod);
  if (cls == nullptr) return nullptr;
  PyErr_SetString(cls, message.c_str());
  Py_DECREF(cls);
  return nullptr;
}

bool Utf8(PyObject* o, const char* what, std::string_view* out) {
  if (!PyUnicode_Check(o)) {
    SetInvalid(std::string(what) + " must be a str, not " + Py_TYPE(o)->tp_name);
    return false;
  }
  Py_ssize_t n;
  const char* p = PyUnicode_AsUTF8AndSize(o, &n);
  if (p == nullptr) {
    PyErr_Clear();
    SetInvalid(std::string(what) + " is not valid Unicode");
    return false;
  }
  *out = std::string_view(p, static_cast<size_t>(n));
  return true;
}

bool OptUtf8(PyObject* o, const char* what, std::optional<std::string_view>* out) {
  if (o == Py_None) {
    out->reset();
    return true;
  }
  std::string_view v;
  if (!Utf8(o, what, &v)) return false;
  *out = v;
  return true;
}

bool StrSeq(PyObject* o, const char* what, std::vector<std::string_view>* out) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) {
    SetInvalid(std::string(what) + " must be a tuple or list of str");
    return false;
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  out->clear();
  for (Py_ssize_t i = 0; i < n; ++i) {
    std::string_view v;
    if (!Utf8(items[i], what, &v)) return false;
    out->push_back(v);
  }
  return true;
}

bool U64(PyObject* o, const char* what, uint64_t* out) {
  if (!PyLong_Check(o) || PyBool_Check(o)) {
    SetInvalid(std::string(what) + " must be an int");
    return false;
  }
  const unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    SetInvalid(std::string(what) + " must be between 0 and 2**64-1");
    return false;
  }
  *out = v;
  return true;
}

bool I64(PyObject* o, const char* what, int64_t* out) {
  if (!PyLong_Check(o) || PyBool_Check(o)) {
    SetInvalid(std::string(what) + " must be an int");
    return false;
  }
  const long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    SetInvalid(std::string(what) + " must fit in a signed 64-bit int");
    return false;
  }
  *out = v;
  return true;
}

bool F64(PyObject* o, const char* what, double* out) {
  if (!PyFloat_CheckExact(o)) {  // msgspec writes an int field value as an int: refuse, not convert
    SetInvalid(std::string(what) + " must be a float");
    return false;
  }
  *out = PyFloat_AS_DOUBLE(o);
  return true;
}

bool OptBytes(PyObject* o, const char* what, std::optional<std::string_view>* out) {
  if (o == Py_None) {
    out->reset();
    return true;
  }
  if (!PyBytes_Check(o)) {
    SetInvalid(std::string(what) + " must be bytes or None");
    return false;
  }
  *out = std::string_view(PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o)));
  return true;
}

// (id, text, created_ms, written_ms) or the 15 fields in format order.
bool ParseArgs(PyObject* const* a, Py_ssize_t n, PutFields* f) {
  if (n == 4) {
    return U64(a[0], "id", &f->id) && Utf8(a[1], "text", &f->text) &&
           I64(a[2], "created_ms", &f->created_ms) && I64(a[3], "written_ms", &f->written_ms);
  }
  if (n != static_cast<Py_ssize_t>(chitta::wal::kPutFields)) {
    SetInvalid("append_put/encode_put take 4 or 15 positional arguments, got " + std::to_string(n));
    return false;
  }
  if (!(U64(a[0], "id", &f->id) && Utf8(a[1], "text", &f->text) && Utf8(a[2], "kind", &f->kind) &&
        I64(a[3], "created_ms", &f->created_ms) && OptUtf8(a[4], "realm", &f->realm) &&
        OptUtf8(a[5], "session", &f->session) && OptUtf8(a[6], "source_tool", &f->source_tool) &&
        OptUtf8(a[7], "harness", &f->harness) && StrSeq(a[8], "tags", &f->tags) &&
        F64(a[9], "confidence", &f->confidence) && F64(a[10], "strength", &f->strength) &&
        OptBytes(a[11], "embedding", &f->embedding) && OptBytes(a[12], "meta", &f->meta_msgpack) &&
        StrSeq(a[13], "artifacts", &f->artifacts) && I64(a[14], "written_ms", &f->written_ms))) {
    return false;
  }
  if (f->meta_msgpack) {  // must be one msgpack map (fixmap, map16, map32)
    const auto& m = *f->meta_msgpack;
    const uint8_t t = m.empty() ? 0 : static_cast<uint8_t>(m[0]);
    if (!((t & 0xf0) == 0x80 || t == 0xde || t == 0xdf)) return SetInvalid("meta must be an encoded msgpack map"), false;
  }
  return true;
}

void Encode(const PutFields& f, Py_ssize_t nargs, std::string* out) {
  out->clear();
  if (nargs == 4) chitta::wal::EncodeSimplePut(f.id, f.text, f.created_ms, f.written_ms, out);
  else chitta::wal::EncodePut(f, out);
}

PyObject* EncodePutFn(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  PutFields f;
  if (!ParseArgs(args, nargs, &f)) return nullptr;
  std::string buf;
  Encode(f, nargs, &buf);
  return PyBytes_FromStringAndSize(buf.data(), static_cast<Py_ssize_t>(buf.size()));
}

constexpr const char* kLogCapsule = "chitta._core.PutAppenderLog";

PyObject* AppendPutFn(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  auto* log = static_cast<std::shared_ptr<chitta::wal::Log>*>(PyCapsule_GetPointer(self, kLogCapsule));
  if (log == nullptr) return nullptr;
  PutFields f;
  if (!ParseArgs(args, nargs, &f)) return nullptr;
  thread_local std::string buf;
  Encode(f, nargs, &buf);
  uint64_t seq = 0;
  chitta::Status st;
  Py_BEGIN_ALLOW_THREADS
  st = (*log)->Append(0, reinterpret_cast<const uint8_t*>(buf.data()), buf.size(), &seq);
  Py_END_ALLOW_THREADS
  if (!st.ok()) return SetPyStatus(st);
  return PyLong_FromUnsignedLongLong(seq);
}

PyMethodDef kEncodePutDef = {"encode_put", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&EncodePutFn)),
                             METH_FASTCALL,
                             "encode_put(id, text, created_ms, written_ms) or all 15 PutPayload fields "
                             "(meta as encoded msgpack bytes) -> the payload bytes chitta.ops.encode gives."};
PyMethodDef kAppendPutDef = {"append_put", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&AppendPutFn)),
                             METH_FASTCALL, "append_put(...) -> seqno: encode_put's payload, appended."};

// ---- decoding -------------------------------------------------------------------
constexpr const char* kFieldOrder[chitta::wal::kPutFields] = {
    "id",      "text", "kind",       "created_ms", "realm",     "session", "source_tool", "harness",
    "tags",    "confidence", "strength", "embedding", "meta", "artifacts", "written_ms"};

// Slot offsets of cls's fields, checked against the format's field order.
bool SlotOffsets(PyTypeObject* cls, Py_ssize_t* offsets) {
  if (PyType_HasFeature(cls, Py_TPFLAGS_HAVE_GC)) {
    SetInvalid("decode_puts needs a gc=False struct type");
    return false;
  }
  py::object fields = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(cls)).attr("__struct_fields__");
  if (py::len(fields) != chitta::wal::kPutFields) {
    SetInvalid("decode_puts: the struct does not have the PutPayload fields");
    return false;
  }
  for (size_t i = 0; i < chitta::wal::kPutFields; ++i) {
    if (py::str(fields[py::int_(i)]).cast<std::string>() != kFieldOrder[i]) {
      SetInvalid("decode_puts: field order differs from PutPayload's");
      return false;
    }
    PyObject* d = PyObject_GetAttrString(reinterpret_cast<PyObject*>(cls), kFieldOrder[i]);
    if (d == nullptr) return false;
    const bool member = Py_IS_TYPE(d, &PyMemberDescr_Type);
    if (member) {
      PyMemberDef* def = reinterpret_cast<PyMemberDescrObject*>(d)->d_member;
      offsets[i] = def->type == T_OBJECT_EX ? def->offset : -1;
    }
    Py_DECREF(d);
    if (!member || offsets[i] <= 0) {
      SetInvalid("decode_puts: a field is not a plain object slot");
      return false;
    }
  }
  return true;
}

// Shares equal short strings (kinds, realms, sessions, tags) inside one run.
class Interner {
 public:
  ~Interner() {
    for (auto& [k, v] : map_) Py_DECREF(v);
  }
  PyObject* Get(std::string_view s) {  // new reference, or nullptr with an error set
    if (s.size() > 64) return PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
    auto it = map_.find(s);
    if (it != map_.end()) {
      Py_INCREF(it->second);
      return it->second;
    }
    PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
    if (o != nullptr && map_.size() < 4096) {
      Py_INCREF(o);
      map_.emplace(s, o);
    }
    return o;
  }

 private:
  std::unordered_map<std::string_view, PyObject*> map_;  // keys point into the read buffer
};

PyObject* OptStr(Interner& in, const std::optional<std::string_view>& s) {
  if (!s) Py_RETURN_NONE;
  return in.Get(*s);
}

PyObject* StrTuple(Interner& in, const std::vector<std::string_view>& v) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(v.size()));
  if (t == nullptr) return nullptr;
  for (size_t i = 0; i < v.size(); ++i) {
    PyObject* s = in.Get(v[i]);
    if (s == nullptr) {
      Py_DECREF(t);
      return nullptr;
    }
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), s);
  }
  return t;
}

PyObject* Float(double d, PyObject* one) {
  if (d == 1.0) {
    Py_INCREF(one);
    return one;
  }
  return PyFloat_FromDouble(d);
}

// A new struct from a parsed view; nullptr with the error cleared when a value
// does not convert (invalid UTF-8): the caller falls back to the general decoder.
PyObject* Build(PyTypeObject* cls, const Py_ssize_t* off, const chitta::wal::PutView& v,
                Interner& in, PyObject* one) {
  PyObject* vals[chitta::wal::kPutFields];
  vals[0] = PyLong_FromUnsignedLongLong(v.id);
  vals[1] = PyUnicode_DecodeUTF8(v.text.data(), static_cast<Py_ssize_t>(v.text.size()), "strict");
  vals[2] = in.Get(v.kind);
  vals[3] = PyLong_FromLongLong(v.created_ms);
  vals[4] = OptStr(in, v.realm);
  vals[5] = OptStr(in, v.session);
  vals[6] = OptStr(in, v.source_tool);
  vals[7] = OptStr(in, v.harness);
  vals[8] = StrTuple(in, v.tags);
  vals[9] = Float(v.confidence, one);
  vals[10] = Float(v.strength, one);
  if (v.embedding) {
    vals[11] = PyBytes_FromStringAndSize(v.embedding->data(), static_cast<Py_ssize_t>(v.embedding->size()));
  } else {
    Py_INCREF(Py_None);
    vals[11] = Py_None;
  }
  Py_INCREF(Py_None);
  vals[12] = Py_None;
  vals[13] = StrTuple(in, v.artifacts);
  vals[14] = PyLong_FromLongLong(v.written_ms);
  bool ok = true;
  for (PyObject* o : vals) ok = ok && o != nullptr;
  PyObject* obj = ok ? cls->tp_alloc(cls, 0) : nullptr;
  if (obj == nullptr) {
    for (PyObject* o : vals) Py_XDECREF(o);
    if (ok) return nullptr;  // allocation failed: a real error
    PyErr_Clear();
    return Py_None;  // marker: fall back
  }
  for (size_t i = 0; i < chitta::wal::kPutFields; ++i) {
    *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + off[i]) = vals[i];
  }
  return obj;
}

}  // namespace

// Raises the chitta.errors class of a core status through the one table in errors.cc.
PyObject* SetPyStatus(const chitta::Status& st) {
  PyObject* mod = PyImport_ImportModule("chitta._core");
  if (mod == nullptr) return nullptr;
  PyObject* fn = PyObject_GetAttrString(mod, "_raise_status_for_test");
  Py_DECREF(mod);
  if (fn == nullptr) return nullptr;
  PyObject* r = PyObject_CallFunction(fn, "issL", static_cast<int>(st.code()), st.message().c_str(),
                                      st.path().c_str(), static_cast<long long>(st.offset()));
  Py_XDECREF(r);
  Py_DECREF(fn);
  return nullptr;
}

py::object MakePutAppender(std::shared_ptr<chitta::wal::Log> log) {
  auto* holder = new std::shared_ptr<chitta::wal::Log>(std::move(log));
  PyObject* cap = PyCapsule_New(holder, kLogCapsule, [](PyObject* c) {
    delete static_cast<std::shared_ptr<chitta::wal::Log>*>(PyCapsule_GetPointer(c, kLogCapsule));
  });
  if (cap == nullptr) {
    delete holder;
    throw py::error_already_set();
  }
  PyObject* fn = PyCFunction_New(&kAppendPutDef, cap);
  Py_DECREF(cap);
  if (fn == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(fn);
}

py::tuple DecodePutRun(const chitta::wal::ReadBatch& b, size_t start, size_t end, py::handle cls_h) {
  if (!PyType_Check(cls_h.ptr())) ThrowInvalid("cls must be a struct type");
  auto* cls = reinterpret_cast<PyTypeObject*>(cls_h.ptr());
  Py_ssize_t off[chitta::wal::kPutFields];
  if (!SlotOffsets(cls, off)) throw py::error_already_set();
  py::list out(end - start);
  py::list fallback;
  Interner in;
  py::object one = py::reinterpret_steal<py::object>(PyFloat_FromDouble(1.0));
  chitta::wal::PutView v;
  for (size_t i = start; i < end; ++i) {
    const auto& r = b.records[i];
    PyObject* obj = Py_None;
    if (chitta::wal::ParsePut(r.payload, r.len, &v)) {
      obj = Build(cls, off, v, in, one.ptr());
      if (obj == nullptr) throw py::error_already_set();
    }
    if (obj == Py_None) {
      Py_INCREF(Py_None);
      fallback.append(i);
    }
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i - start), obj);
  }
  return py::make_tuple(out, fallback);
}

CHITTA_BIND(wal_put) {
  PyObject* fn = PyCFunction_NewEx(&kEncodePutDef, nullptr, m.ptr());
  if (fn == nullptr) throw py::error_already_set();
  m.add_object("encode_put", py::reinterpret_steal<py::object>(fn));
}

}  // namespace chitta_ext
