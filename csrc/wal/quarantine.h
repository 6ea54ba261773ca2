// csrc/wal/quarantine.h
// What the owner of a segment cuts off is never discarded: the bytes go to
// <root>/quarantine/<segment>.<offset>.bin with a JSON report beside them
// (<segment>.<offset>.json: segment, offset, bytes, why, time_ms). FORMAT.md §5.
#pragma once

#include <cstdint>
#include <string>

#include "chitta/status.h"

namespace chitta::wal {

// Copies bytes [offset, offset + bytes) of <root>/segments/<segment> into the
// quarantine and writes the report; durable (fsync) before it returns, so
// the caller may then cut them off.
Status QuarantineTail(const std::string& root, const std::string& segment, uint64_t offset,
                      uint64_t bytes, const std::string& why);

}  // namespace chitta::wal
