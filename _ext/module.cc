// _ext/module.cc
// chitta._core: the binding module. Holds no logic; each area binds itself
// through CHITTA_BIND (registry.h).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "registry.h"

namespace chitta_ext {
namespace {

std::vector<std::pair<std::string, BindFn>>& Registry() {
  static std::vector<std::pair<std::string, BindFn>> registry;
  return registry;
}

}  // namespace

Registrar::Registrar(const char* name, BindFn fn) { Registry().emplace_back(name, fn); }

void BindAll(py::module_& m) {
  auto& reg = Registry();
  // Registration order follows static-initialiser order, which is unspecified:
  // sort so the module is built the same way every time.
  std::sort(reg.begin(), reg.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [name, fn] : reg) fn(m);
}

}  // namespace chitta_ext

PYBIND11_MODULE(_core, m) {
  m.doc() = "chitta native core (segment log, indexes). Use the chitta package, not this.";
  chitta_ext::RegisterErrorTranslator();
  chitta_ext::BindAll(m);
}
