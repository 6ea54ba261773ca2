// _ext/bind_wal_queue.cc
// _core.PutQueue: Field.remember's plain path in one plain CPython call
// (SegmentLog.put_queue()). Conversion only: the checks Python's
// chitta.ops.checks.text makes, answered "not mine" (None) for anything
// unusual so that Python raises its own error; the clock; the GIL released
// around the encode, append and queue of csrc/wal/put_queue.* where it waits
// for the disk (fsync) or writes a long text.
//   q.put(text)   -> id, or None: the text needs Python's checks
//   q.new_id()    -> id (the other write paths draw from the same counter)
//   q.take()      -> (ids u64, ms i64, arena bytes, offsets i64) or None
//   len(q)        -> queued puts
//   q.remember_entry(func, ref, gate=None) -> the Field's remember entry (bind_wal_entry.cc)
#include <pybind11/numpy.h>

#include <cstring>
#include <memory>
#include <string>

#include "wal/put_queue.h"
#include "wal_py.h"  // Python.h first

namespace chitta_ext {
namespace {

using chitta::wal::PutQueue;
using chitta::wal::PutRun;

struct QueueObject {
  PyObject_HEAD
  PutQueue* queue;
  PutRun* spare;       // take()'s buffers, swapped with the queue's
  PyObject* clock;     // nullptr: the system clock
  PyObject* drain;     // nullptr: none; else called when `limit` puts are queued
  Py_ssize_t limit;
  Py_ssize_t max_text;  // bytes of UTF-8 (chitta.ops.checks.MAX_TEXT_BYTES)
  bool release_gil;     // fsync: the group commit waits; always let other threads run
};

// flush / buffered durability: a put of a text up to this size keeps the GIL
// across its write(2) to the page cache (~0.5 us; dropping and retaking the GIL
// costs ~0.1 us, a tenth of the call). Longer texts and fsync release it.
constexpr Py_ssize_t kHoldGilMaxBytes = 64 * 1024;

PyObject* queue_type = nullptr;

QueueObject* Self(PyObject* o) { return reinterpret_cast<QueueObject*>(o); }

PyObject* RaiseUsedUp() {
  PyObject* mod = PyImport_ImportModule("chitta.errors");
  if (mod == nullptr) return nullptr;
  PyObject* cls = PyObject_GetAttrString(mod, "ChittaError");
  Py_DECREF(mod);
  if (cls == nullptr) return nullptr;
  PyErr_SetString(cls, "this instance has used all 2**32 memory ids; open a new instance");
  Py_DECREF(cls);
  return nullptr;
}

// str.isspace() of a non-empty str: every code point whitespace.
bool AllSpace(PyObject* s) {
  const int kind = PyUnicode_KIND(s);
  const void* data = PyUnicode_DATA(s);
  const Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) return false;
  }
  return true;
}

// int(clock() * 1000), as Field._now_ms computes it.
bool ClockMs(PyObject* clock, int64_t* out) {
  PyObject* t = PyObject_CallNoArgs(clock);
  if (t == nullptr) return false;
  PyObject* k = PyLong_FromLong(1000);
  PyObject* scaled = k == nullptr ? nullptr : PyNumber_Multiply(t, k);
  Py_DECREF(t);
  Py_XDECREF(k);
  if (scaled == nullptr) return false;
  PyObject* i = PyNumber_Long(scaled);
  Py_DECREF(scaled);
  if (i == nullptr) return false;
  const long long v = PyLong_AsLongLong(i);
  Py_DECREF(i);
  if (v == -1 && PyErr_Occurred()) return false;
  *out = v;
  return true;
}

PyObject* Put(PyObject* self_, PyObject* const* args, Py_ssize_t nargs) {
  QueueObject* self = Self(self_);
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "put() takes exactly one argument (text)");
    return nullptr;
  }
  PyObject* text = args[0];
  // The rules of chitta.ops.checks.text for a plain str; anything else (a str
  // subclass, empty or blank, unencodable, over the limit) goes back to Python.
  if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(text, &n);  // ASCII: the str's own bytes
  if (p == nullptr) {
    PyErr_Clear();
    Py_RETURN_NONE;
  }
  if (n == 0 || n > self->max_text || AllSpace(text)) Py_RETURN_NONE;
  int64_t ms;
  if (self->clock == nullptr) {
    ms = PutQueue::NowMs();
  } else if (!ClockMs(self->clock, &ms)) {
    return nullptr;
  }
  uint64_t id;
  if (!self->queue->NewId(&id)) return RaiseUsedUp();
  chitta::Status st;
  // The text's bytes stay valid: the caller holds the str, and a str never changes.
  const std::string_view view(p, static_cast<size_t>(n));
  if (self->release_gil || n > kHoldGilMaxBytes) {
    Py_BEGIN_ALLOW_THREADS
    st = self->queue->Put(id, view, ms);
    Py_END_ALLOW_THREADS
  } else {
    st = self->queue->Put(id, view, ms);  // one short write(2) to the page cache
  }
  if (!st.ok()) return SetPyStatus(st);
  if (self->drain != nullptr && static_cast<Py_ssize_t>(self->queue->size()) >= self->limit) {
    PyObject* drain = self->drain;
    Py_INCREF(drain);
    PyObject* r = PyObject_CallNoArgs(drain);
    Py_DECREF(drain);
    if (r == nullptr) return nullptr;
    Py_DECREF(r);
  }
  return PyLong_FromUnsignedLongLong(id);
}

PyObject* NewId(PyObject* self, PyObject*) {
  uint64_t id;
  if (!Self(self)->queue->NewId(&id)) return RaiseUsedUp();
  return PyLong_FromUnsignedLongLong(id);
}

PyObject* StartIds(PyObject* self, PyObject* arg) {
  const unsigned long long v = PyLong_AsUnsignedLongLong(arg);
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
  if (v < 1) {
    PyErr_SetString(PyExc_ValueError, "local ids start at 1");
    return nullptr;
  }
  Self(self)->queue->StartIds(v);
  Py_RETURN_NONE;
}

template <typename T>
py::array_t<T> Column(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
  return a;
}

PyObject* Take(PyObject* self_, PyObject*) {
  QueueObject* self = Self(self_);
  PutRun* run = self->spare;
  self->queue->Take(run);  // under the GIL: no other take() shares `spare`
  if (run->size() == 0) Py_RETURN_NONE;
  try {
    py::tuple out = py::make_tuple(Column(run->ids), Column(run->ms), py::bytes(run->arena),
                                   Column(run->offsets));
    run->Clear();
    return out.release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  }
  return nullptr;
}

PyObject* SetDrain(PyObject* self_, PyObject* const* args, Py_ssize_t nargs) {
  QueueObject* self = Self(self_);
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "set_drain(fn, limit) takes two arguments");
    return nullptr;
  }
  const Py_ssize_t limit = PyLong_AsSsize_t(args[1]);
  if (limit == -1 && PyErr_Occurred()) return nullptr;
  if (args[0] != Py_None && !PyCallable_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "set_drain: fn must be callable or None");
    return nullptr;
  }
  PyObject* old = self->drain;
  self->drain = args[0] == Py_None ? nullptr : args[0];
  Py_XINCREF(self->drain);
  Py_XDECREF(old);
  self->limit = limit < 1 ? 1 : limit;
  Py_RETURN_NONE;
}

PyObject* NextLocal(PyObject* self, void*) {
  return PyLong_FromUnsignedLongLong(Self(self)->queue->next_local());
}

Py_ssize_t Length(PyObject* self) { return static_cast<Py_ssize_t>(Self(self)->queue->size()); }

int Traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Self(self)->clock);
  Py_VISIT(Self(self)->drain);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int Clear(PyObject* self) {
  Py_CLEAR(Self(self)->clock);
  Py_CLEAR(Self(self)->drain);
  return 0;
}

void Dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Clear(self);
  delete Self(self)->queue;
  delete Self(self)->spare;
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* MakeEntryFn(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  return MakeRememberEntry(self, args, nargs);
}

PyMethodDef kMethods[] = {
    {"put", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&Put)), METH_FASTCALL,
     "put(text) -> id: append a plain PutPayload (every field but the text at its default, "
     "created = written = now) and queue it for the organs; None when the text needs Python's checks."},
    {"new_id", NewId, METH_NOARGS, "new_id() -> the next memory id of this instance."},
    {"start_ids", StartIds, METH_O, "start_ids(next_local): where this instance's local ids continue."},
    {"take", Take, METH_NOARGS,
     "take() -> (ids, ms, arena, offsets) of everything queued, oldest first, or None."},
    {"set_drain", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&SetDrain)), METH_FASTCALL,
     "set_drain(fn, limit): put() calls fn() once `limit` puts are queued (None: never)."},
    {"remember_entry", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&MakeEntryFn)), METH_FASTCALL,
     "remember_entry(func, weakref_to_field, gate=None) -> a callable: remember(text) through put(), any "
     "other call as func(field, ...)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kGetSet[] = {
    {"next_local", NextLocal, nullptr, "the next local id to hand out", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kSlots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&Dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(&Traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(&Clear)},
    {Py_tp_methods, kMethods},
    {Py_tp_getset, kGetSet},
    {Py_sq_length, reinterpret_cast<void*>(&Length)},
    {Py_tp_doc, const_cast<char*>("Field.remember's native plain path (SegmentLog.put_queue()).")},
    {0, nullptr}};

PyType_Spec kSpec = {"chitta._core.PutQueue", sizeof(QueueObject), 0,
                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, kSlots};


}  // namespace

PyObject* PutQueuePut(PyObject* queue, PyObject* const* args, Py_ssize_t nargs) { return Put(queue, args, nargs); }

py::object MakePutQueue(std::shared_ptr<chitta::wal::Log> log, py::object clock, Py_ssize_t max_text_bytes,
                        bool waits_for_disk) {
  if (queue_type == nullptr) throw std::runtime_error("PutQueue type not ready");
  if (!clock.is_none() && !PyCallable_Check(clock.ptr())) ThrowInvalid("clock must be callable or None");
  if (max_text_bytes < 1) ThrowInvalid("max_text_bytes must be positive");
  auto* type = reinterpret_cast<PyTypeObject*>(queue_type);
  PyObject* o = type->tp_alloc(type, 0);
  if (o == nullptr) throw py::error_already_set();
  QueueObject* self = Self(o);
  const uint32_t instance = log->instance_id();
  self->queue = new PutQueue(std::move(log), instance);
  self->spare = new PutRun();
  self->clock = clock.is_none() ? nullptr : clock.inc_ref().ptr();
  self->drain = nullptr;
  self->limit = 1;
  self->max_text = max_text_bytes;
  self->release_gil = waits_for_disk;
  return py::reinterpret_steal<py::object>(o);
}

CHITTA_BIND(wal_queue) {
  queue_type = PyType_FromSpec(&kSpec);
  if (queue_type == nullptr) throw py::error_already_set();
  Py_INCREF(queue_type);  // the module's reference; queue_type keeps its own
  m.add_object("PutQueue", py::reinterpret_steal<py::object>(queue_type));
}

}  // namespace chitta_ext
