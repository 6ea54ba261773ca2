// csrc/capi/capi_util.cc
// Error text and code mapping for the C API (see capi_util.h).
#include "capi/capi_util.h"

namespace chitta::capi {
namespace {

thread_local std::string t_error;

struct CodeRow {
  Code code;
  cf_status status;
};

// The one table: every chitta::Code and the cf_status it becomes.
constexpr CodeRow kCodeTable[] = {
    {Code::kOk, CF_OK},
    {Code::kNotFound, CF_ENOTFOUND},
    {Code::kCorruption, CF_ECORRUPT},
    {Code::kCrcMismatch, CF_ECRC},
    {Code::kInvalidArgument, CF_EINVAL},
    {Code::kIOError, CF_EIO},
    {Code::kUnsupported, CF_EUNSUPPORTED},
    {Code::kLocked, CF_ELOCKED},
    {Code::kClosed, CF_ECLOSED},
};

}  // namespace

void SetError(std::string text) noexcept {
  try {
    t_error = std::move(text);
  } catch (...) {
    t_error.clear();  // no memory for the text: leave it empty rather than throw
  }
}

void ClearError() noexcept { t_error.clear(); }

const char* LastError() noexcept { return t_error.c_str(); }

cf_status CodeToStatus(Code code) noexcept {
  for (const CodeRow& row : kCodeTable) {
    if (row.code == code) return row.status;
  }
  return CF_EINTERNAL;
}

cf_status Fail(const Status& st) noexcept {
  if (st.ok()) return CF_OK;
  try {
    std::string text = st.ToString();
    if (!st.path().empty()) {
      text += " (segment " + st.path();
      if (st.offset() >= 0) text += ", offset " + std::to_string(st.offset());
      text += ")";
    }
    SetError(std::move(text));
  } catch (...) {
    ClearError();
  }
  return CodeToStatus(st.code());
}

cf_status Fail(cf_status code, const char* fn, const std::string& text) noexcept {
  try {
    SetError(std::string(fn) + ": " + text);
  } catch (...) {
    ClearError();
  }
  return code;
}

}  // namespace chitta::capi

extern "C" {

CF_API int cf_abi_version(void) { return CF_ABI_VERSION; }

CF_API const char* cf_last_error(void) { return chitta::capi::LastError(); }

CF_API const char* cf_status_name(cf_status status) {
  switch (status) {
    case CF_OK: return "CF_OK";
    case CF_ENOTFOUND: return "CF_ENOTFOUND";
    case CF_ECORRUPT: return "CF_ECORRUPT";
    case CF_ECRC: return "CF_ECRC";
    case CF_EINVAL: return "CF_EINVAL";
    case CF_EIO: return "CF_EIO";
    case CF_EUNSUPPORTED: return "CF_EUNSUPPORTED";
    case CF_ELOCKED: return "CF_ELOCKED";
    case CF_ECLOSED: return "CF_ECLOSED";
    case CF_ENOMEM: return "CF_ENOMEM";
    case CF_EINTERNAL: return "CF_EINTERNAL";
    case CF_EUNAVAILABLE: return "CF_EUNAVAILABLE";
  }
  return "CF_UNKNOWN";
}

}  // extern "C"
