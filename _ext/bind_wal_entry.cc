// _ext/bind_wal_entry.cc
// _core.RememberEntry: a Field's `remember` for the plain call. A vectorcall
// object (PutQueue.remember_entry(func, weakref_to_field)) that a Field
// installs on its instance: remember(text) with the text alone goes to
// PutQueue.put; any other call - keywords, a text put() leaves to Python's
// checks - runs the class's Python remember(field, ...) with the same
// arguments. It holds the field weakly (no cycle through the field's dict)
// and its queue strongly: a plain remember(text) whose field went away right
// after the lookup still lands in the log. An optional gate(text) runs first:
// anything but None sends the call to Python (the text names a kind to infer:
// chitta/policies/kinds.py), so the plain call stays native only for plain texts.
#include "wal_py.h"  // Python.h first

#include <structmember.h>  // T_PYSSIZET

namespace chitta_ext {
namespace {

struct EntryObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* queue;  // the PutQueue
  PyObject* func;   // the class's remember function (self first)
  PyObject* field;  // a weakref to the Field
  PyObject* gate;   // None or gate(text): None keeps the call native
};

PyObject* entry_type = nullptr;

EntryObject* Entry(PyObject* o) { return reinterpret_cast<EntryObject*>(o); }

PyObject* EntryCall(PyObject* self_, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  EntryObject* self = Entry(self_);
  PyObject* field = PyWeakref_GetObject(self->field);  // borrowed
  if (field == nullptr) return nullptr;
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  bool plain = nargs == 1 && (kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0);
  if (plain && self->gate != Py_None && PyUnicode_CheckExact(args[0])) {
    PyObject* verdict = PyObject_CallOneArg(self->gate, args[0]);
    if (verdict == nullptr) return nullptr;
    plain = verdict == Py_None;
    Py_DECREF(verdict);
  }
  if (plain) {
    // Also when the field is gone (chitta.open(p).remember("x"): the field's last
    // reference went with the attribute lookup): the queue holds the log, so the
    // record lands in it as it would have (the next open replays it). A closed
    // log refuses, as the field would.
    PyObject* id = PutQueuePut(self->queue, args, 1);
    if (id != Py_None) return id;  // the id, or nullptr with the error set
    Py_DECREF(id);
  }
  if (field == Py_None) {  // the Python path needs its field
    PyErr_SetString(PyExc_ReferenceError,
                    "the field of this remember() is gone; keep it in a variable (f = chitta.open(...)) "
                    "or use `with chitta.open(...) as f:`");
    return nullptr;
  }
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  const Py_ssize_t total = nargs + nkw;
  PyObject* small[9];
  PyObject** full = total + 1 <= 9 ? small : static_cast<PyObject**>(PyMem_Malloc((total + 1) * sizeof(PyObject*)));
  if (full == nullptr) return PyErr_NoMemory();
  Py_INCREF(field);
  full[0] = field;
  for (Py_ssize_t i = 0; i < total; ++i) full[i + 1] = args[i];
  PyObject* r = PyObject_Vectorcall(self->func, full, static_cast<size_t>(nargs + 1), kwnames);
  Py_DECREF(field);
  if (full != small) PyMem_Free(full);
  return r;
}

// inspect.signature(field.remember) and help() see the Python method.
PyObject* EntryWrapped(PyObject* self_, void*) {
  EntryObject* self = Entry(self_);
  PyObject* field = PyWeakref_GetObject(self->field);
  if (field == nullptr) return nullptr;
  if (field == Py_None) return Py_NewRef(self->func);
  return PyMethod_New(self->func, field);
}

PyObject* EntryDoc(PyObject* self, void*) { return PyObject_GetAttrString(Entry(self)->func, "__doc__"); }

int EntryTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Entry(self)->queue);
  Py_VISIT(Entry(self)->func);
  Py_VISIT(Entry(self)->field);
  Py_VISIT(Entry(self)->gate);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int EntryClear(PyObject* self) {
  Py_CLEAR(Entry(self)->queue);
  Py_CLEAR(Entry(self)->func);
  Py_CLEAR(Entry(self)->field);
  Py_CLEAR(Entry(self)->gate);
  return 0;
}

void EntryDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  EntryClear(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyMemberDef kEntryMembers[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(EntryObject, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef kEntryGetSet[] = {
    {"__wrapped__", EntryWrapped, nullptr, "the Python remember, bound to the field", nullptr},
    {"__doc__", EntryDoc, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kEntrySlots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&EntryDealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(&EntryTraverse)},
    {Py_tp_clear, reinterpret_cast<void*>(&EntryClear)},
    {Py_tp_call, reinterpret_cast<void*>(&PyVectorcall_Call)},
    {Py_tp_members, kEntryMembers},
    {Py_tp_getset, kEntryGetSet},
    {0, nullptr}};

PyType_Spec kEntrySpec = {"chitta._core.RememberEntry", sizeof(EntryObject), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                              Py_TPFLAGS_DISALLOW_INSTANTIATION,
                          kEntrySlots};

}  // namespace

PyObject* MakeRememberEntry(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 2 || nargs > 3 || !PyCallable_Check(args[0]) || !PyWeakref_CheckRef(args[1]) ||
      (nargs == 3 && args[2] != Py_None && !PyCallable_Check(args[2]))) {
    PyErr_SetString(PyExc_TypeError, "remember_entry(func, weakref_to_field, gate=None)");
    return nullptr;
  }
  if (entry_type == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "RememberEntry type not ready");
    return nullptr;
  }
  auto* type = reinterpret_cast<PyTypeObject*>(entry_type);
  PyObject* o = type->tp_alloc(type, 0);
  if (o == nullptr) return nullptr;
  EntryObject* e = Entry(o);
  e->vectorcall = &EntryCall;
  e->queue = Py_NewRef(self);
  e->func = Py_NewRef(args[0]);
  e->field = Py_NewRef(args[1]);
  e->gate = Py_NewRef(nargs == 3 ? args[2] : Py_None);
  return o;
}

CHITTA_BIND(wal_entry) {
  entry_type = PyType_FromSpec(&kEntrySpec);
  if (entry_type == nullptr) throw py::error_already_set();
}

}  // namespace chitta_ext
