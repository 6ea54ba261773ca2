// csrc/wal/segment_reader.h
// Parses the bytes of one segment (docs/FORMAT.md). Tells a torn tail (an
// unfinished write at the end: not an error, read again later) from damage (a
// complete record that fails its checks). In strict mode the first damage is
// returned as a Status naming segment and offset; with salvage it is recorded,
// the reader resynchronises at the next valid record, and scanning goes on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "chitta/status.h"

namespace chitta::wal {

enum class DamageKind : uint8_t {
  kTornTail = 0,      // incomplete record or header at the end (not corruption)
  kBadMagic,          // the file does not start with the segment magic
  kFutureVersion,     // written by a newer major format version
  kBadHeader,         // header checksum fails, or disagrees with the file name
  kBadLength,         // length field larger than the maximum, or framing lost
  kCrcMismatch,       // complete record whose CRC-32C fails
  kSeqnoOrder,        // valid CRC but seqno not above the previous record's
};
const char* DamageKindName(DamageKind kind);

struct Damage {
  std::string segment;  // file name inside segments/
  uint64_t offset = 0;  // byte offset of the damaged record (or 0 for header damage)
  uint64_t bytes = 0;   // bytes skipped (salvage) or left unread (torn tail)
  DamageKind kind = DamageKind::kTornTail;
  std::string detail;
};

struct RawRecord {
  uint64_t seqno;
  uint8_t op_type;
  uint64_t offset;  // of the record's first byte in the segment
  const uint8_t* payload;
  uint32_t len;
};

// Where a reader stands in one segment; survives between reads for tailing.
struct ScanState {
  bool header_ok = false;
  bool dead = false;          // salvage gave up on this segment (bad header)
  uint64_t offset = 0;        // next unread byte
  uint64_t last_seqno = 0;    // seqno of the last record accepted
};

struct ScanResult {
  uint64_t records = 0;
  uint64_t torn_bytes = 0;    // bytes after offset that form an incomplete record
};

// Scans data[state->offset, limit). Every valid record goes to on_record in
// file order. Stops at an incomplete tail, leaving state->offset at its start.
Status ScanSegment(const std::string& name, uint32_t instance_id, uint64_t first_seqno,
                   const uint8_t* data, uint64_t limit, bool salvage, ScanState* state,
                   std::vector<Damage>* damages, ScanResult* result,
                   const std::function<void(const RawRecord&)>& on_record);

}  // namespace chitta::wal
