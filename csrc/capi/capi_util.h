// csrc/capi/capi_util.h
// Shared by the C API files: the thread-local error text, the one table from
// chitta::Code to cf_status, and Guard(), which runs an entry point's body
// and turns any exception into a code. csrc/capi/ is the only place in the
// core that catches; nothing thrown ever leaves a cf_* function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "chitta/chitta_field.h"
#include "chitta/status.h"

namespace chitta::capi {

// Sets the text cf_last_error() returns on this thread.
void SetError(std::string text) noexcept;
void ClearError() noexcept;
const char* LastError() noexcept;

// The cf_status for a core code (the single mapping table).
cf_status CodeToStatus(Code code) noexcept;

// Records st's text (with its segment and offset, if any) and maps its code.
cf_status Fail(const Status& st) noexcept;
cf_status Fail(cf_status code, const char* fn, const std::string& text) noexcept;

// CF_EINVAL naming the function and the argument.
inline cf_status Invalid(const char* fn, const std::string& what) noexcept {
  return Fail(CF_EINVAL, fn, what);
}

// n rows of `width` elements: false if the element count overflows size_t or
// exceeds `limit` elements.
inline bool CountFits(size_t n, size_t width, size_t limit = SIZE_MAX / 16) {
  return width == 0 || n <= limit / width;
}

// Runs body (returning cf_status) with the error text cleared first; every
// exception becomes CF_ENOMEM or CF_EINTERNAL with a text naming fn.
template <typename Body>
cf_status Guard(const char* fn, Body&& body) noexcept {
  ClearError();
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(CF_ENOMEM, fn, "out of memory");
  } catch (const std::length_error& e) {
    return Fail(CF_ENOMEM, fn, std::string("allocation too large: ") + e.what());
  } catch (const std::exception& e) {
    return Fail(CF_EINTERNAL, fn, std::string("unexpected failure: ") + e.what());
  } catch (...) {
    return Fail(CF_EINTERNAL, fn, "unexpected failure (unknown exception)");
  }
}

}  // namespace chitta::capi
