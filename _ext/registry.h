// _ext/registry.h
// Each bind_<area>.cc registers itself with CHITTA_BIND(area) { ... } so that
// adding an area never edits module.cc. ThrowIfError turns a core Status into
// the chitta.errors class of its code (table in errors.cc).
#pragma once

#include <pybind11/pybind11.h>

#include "chitta/status.h"

namespace chitta_ext {

namespace py = pybind11;
using BindFn = void (*)(py::module_&);

struct Registrar {
  Registrar(const char* name, BindFn fn);
};

void BindAll(py::module_& m);
void RegisterErrorTranslator();

// Carries a non-OK Status out of a binding; translated to a chitta.errors class.
struct StatusError {
  chitta::Status status;
};

inline void ThrowIfError(chitta::Status st) {
  if (!st.ok()) throw StatusError{std::move(st)};
}

// Raise chitta.errors.InvalidArgument with a message.
[[noreturn]] void ThrowInvalid(const std::string& message);

}  // namespace chitta_ext

#define CHITTA_BIND(area)                                                    \
  static void ChittaBind_##area(::chitta_ext::py::module_& m);               \
  static ::chitta_ext::Registrar chitta_registrar_##area(#area, &ChittaBind_##area); \
  static void ChittaBind_##area(::chitta_ext::py::module_& m)
