// csrc/include/chitta/status.h
// The core's error currency. Nothing in csrc/ throws: fallible calls return a
// [[nodiscard]] Status or Result<T>. The binding layer (_ext/errors.cc) and the
// C API map each Code to one error class / cf_status from a single table.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace chitta {

enum class Code : int {
  kOk = 0,
  kNotFound = 1,
  kCorruption = 2,        // damaged bytes on disk (bad magic, bad length, ...)
  kCrcMismatch = 3,       // a complete record whose checksum fails
  kInvalidArgument = 4,   // the caller passed something unusable
  kIOError = 5,           // the operating system refused
  kUnsupported = 6,       // e.g. a future major format version
  kLocked = 7,            // an instance lock is held by a live process
  kClosed = 8,            // use after close
};

const char* CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status Corruption(std::string m) { return Status(Code::kCorruption, std::move(m)); }
  static Status CrcMismatch(std::string m) { return Status(Code::kCrcMismatch, std::move(m)); }
  static Status InvalidArgument(std::string m) {
    return Status(Code::kInvalidArgument, std::move(m));
  }
  static Status IOError(std::string m) { return Status(Code::kIOError, std::move(m)); }
  static Status Unsupported(std::string m) { return Status(Code::kUnsupported, std::move(m)); }
  static Status Locked(std::string m) { return Status(Code::kLocked, std::move(m)); }
  static Status Closed(std::string m) { return Status(Code::kClosed, std::move(m)); }

  // Where on disk the problem is, for damage reports (segment path, byte offset).
  Status&& At(std::string path, int64_t offset) && {
    path_ = std::move(path);
    offset_ = offset;
    return std::move(*this);
  }
  const std::string& path() const { return path_; }
  int64_t offset() const { return offset_; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::string path_;
  int64_t offset_ = -1;
};

// A value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() { return value_; }
  const T& value() const { return value_; }

 private:
  Status status_;
  T value_{};
};

}  // namespace chitta

#define CHITTA_RETURN_IF_ERROR(expr)          \
  do {                                        \
    ::chitta::Status _st = (expr);            \
    if (!_st.ok()) return _st;                \
  } while (0)
