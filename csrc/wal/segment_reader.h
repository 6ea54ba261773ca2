// csrc/wal/segment_reader.h
// Parses the bytes of one segment (docs/FORMAT.md, section 5's decision table).
// Tells a torn tail (an unfinished write at the end of an instance's last
// segment: not an error, read again later) from damage (anything else that
// fails a check, a cut in a segment with a successor included). In strict mode
// the first damage is returned as a Status naming segment and offset; with
// salvage it is recorded, the reader resynchronises at the next valid record,
// and scanning goes on. Reads layouts 1.0 and 2.0 (header CRC, seal).
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
  kBadRecordHeader,   // 2.0: a record header whose own CRC fails
  kTruncated,         // a record cut short in a segment that has a successor
  kMissingSeal,       // 2.0: a segment with a successor ends without its seal
  kBadSeal,           // 2.0: the seal disagrees with the segment, or bytes follow it
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
  uint16_t major = 0;         // layout of the segment (0: not known yet; read from its header)
  bool sealed = false;        // its end was verified (2.0 seal, or 1.0 read to the end with a successor)
  bool counted = true;        // records counts every record since the header (false when resumed)
  uint64_t records = 0;       // records accepted
};

struct ScanResult {
  uint64_t records = 0;
  uint64_t torn_bytes = 0;    // bytes after offset that form an incomplete record
};

// Scans data[state->offset, limit). Every valid record goes to on_record in
// file order. `last`: the segment is its instance's last (only there can a
// write be unfinished; elsewhere a short read is damage and a 2.0 segment must
// end with its seal). Stops at an incomplete tail, leaving state->offset at
// its start, and at a seal, leaving state->offset at the seal.
Status ScanSegment(const std::string& name, uint32_t instance_id, uint64_t first_seqno,
                   const uint8_t* data, uint64_t limit, bool salvage, bool last, ScanState* state,
                   std::vector<Damage>* damages, ScanResult* result,
                   const std::function<void(const RawRecord&)>& on_record);

}  // namespace chitta::wal
