// _ext/bind_slots.cc
// chitta._core._new_slotted: build an instance of a slotted class (a frozen
// dataclass with slots) by setting its member descriptors directly, as
// chitta.model.memory_of does in Python with the descriptors' __set__, one C
// call per slot instead of one Python call. Recall builds a Memory and a Hit
// per returned hit with it. No __init__ runs (no validation: the callers pass
// the values a constructor would get, in slot order).
#include <Python.h>

#include <string>

#include "registry.h"

namespace chitta_ext {
namespace {

PyObject* NewSlotted(PyObject* cls, PyObject* descriptors, PyObject* values) {
  if (!PyType_Check(cls)) {
    PyErr_SetString(PyExc_TypeError, "cls must be a type");
    return nullptr;
  }
  if (!PyTuple_Check(descriptors) || !PyTuple_Check(values)) {
    PyErr_SetString(PyExc_TypeError, "descriptors and values must be tuples");
    return nullptr;
  }
  const Py_ssize_t n = PyTuple_GET_SIZE(descriptors);
  if (PyTuple_GET_SIZE(values) != n) {
    PyErr_Format(PyExc_TypeError, "%zd slots but %zd values", n, PyTuple_GET_SIZE(values));
    return nullptr;
  }
  auto* type = reinterpret_cast<PyTypeObject*>(cls);
  PyObject* obj = type->tp_alloc(type, 0);  // what object.__new__(cls) does for a slotted class
  if (obj == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* descr = PyTuple_GET_ITEM(descriptors, i);
    descrsetfunc set = Py_TYPE(descr)->tp_descr_set;
    // A member descriptor checks that obj is an instance of its class.
    if (set == nullptr || set(descr, obj, PyTuple_GET_ITEM(values, i)) < 0) {
      if (set == nullptr) PyErr_SetString(PyExc_TypeError, "a descriptor cannot be set");
      Py_DECREF(obj);
      return nullptr;
    }
  }
  return obj;
}

PyObject* NewSlottedPy(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "_new_slotted(cls, descriptors, values)");
    return nullptr;
  }
  return NewSlotted(args[0], args[1], args[2]);
}

PyMethodDef kNewSlotted = {"_new_slotted", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(NewSlottedPy)),
                           METH_FASTCALL,
                           "_new_slotted(cls, descriptors, values): an instance of the slotted class cls with "
                           "each member descriptor set to its value (no __init__)."};

}  // namespace

CHITTA_BIND(slots) {
  PyObject* fn = PyCFunction_NewEx(&kNewSlotted, nullptr, m.attr("__name__").ptr());
  if (fn == nullptr) throw py::error_already_set();
  m.add_object("_new_slotted", py::reinterpret_steal<py::object>(fn));
}

}  // namespace chitta_ext
