// _ext/errors.cc
// The one table from core status codes to chitta.errors classes.
#include <string>

#include "registry.h"

namespace chitta_ext {
namespace {

const char* ClassNameFor(chitta::Code code) {
  switch (code) {
    case chitta::Code::kNotFound: return "NotFound";
    case chitta::Code::kCorruption: return "CorruptionError";
    case chitta::Code::kCrcMismatch: return "CrcMismatch";
    case chitta::Code::kInvalidArgument: return "InvalidArgument";
    case chitta::Code::kIOError: return "ChittaIOError";
    case chitta::Code::kUnsupported: return "UnsupportedFormat";
    case chitta::Code::kLocked: return "LockedError";
    case chitta::Code::kClosed: return "ClosedError";
    case chitta::Code::kOk: break;
  }
  return "ChittaError";
}

void Raise(const chitta::Status& st) {
  py::module_ errors = py::module_::import("chitta.errors");
  py::object cls = errors.attr(ClassNameFor(st.code()));
  py::object exc = cls(st.message());
  if (!st.path().empty()) exc.attr("segment") = st.path();
  if (st.offset() >= 0) exc.attr("offset") = st.offset();
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

}  // namespace

void RegisterErrorTranslator() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      Raise(e.status);
    }
  });
}

void ThrowInvalid(const std::string& message) {
  throw StatusError{chitta::Status::InvalidArgument(message)};
}

CHITTA_BIND(errors) {
  m.def("_raise_status_for_test", [](int code, const std::string& message,
                                     const std::string& path, int64_t offset) {
    chitta::Status st(static_cast<chitta::Code>(code), message);
    if (path.empty() && offset < 0) ThrowIfError(std::move(st));
    ThrowIfError(std::move(st).At(path, offset));
  }, "Raise the chitta.errors class mapped from a core status code (tests only).");
}

}  // namespace chitta_ext
