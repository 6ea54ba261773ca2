// csrc/util/status.cc
#include "chitta/status.h"

namespace chitta {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "Ok";
    case Code::kNotFound: return "NotFound";
    case Code::kCorruption: return "Corruption";
    case Code::kCrcMismatch: return "CrcMismatch";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kIOError: return "IOError";
    case Code::kUnsupported: return "Unsupported";
    case Code::kLocked: return "Locked";
    case Code::kClosed: return "Closed";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace chitta
