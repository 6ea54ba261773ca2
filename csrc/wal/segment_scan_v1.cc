// csrc/wal/segment_scan_v1.cc
// Records of layout 1.0 (len | crc | seqno | op_type | payload; the CRC does
// not cover the length). Read only; writers write 2.0.
#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/segment_format.h"
#include "wal/segment_scan.h"

namespace chitta::wal::scan {

namespace {

// A record is valid at pos iff its header and payload fit before limit, its
// length is at most kMaxPayload, its CRC matches, and its seqno is above
// last_seqno.
bool ValidAt(const uint8_t* data, uint64_t pos, uint64_t limit, uint64_t last_seqno) {
  if (limit - pos < kRecordHeaderSize) return false;
  const uint8_t* p = data + pos;
  uint32_t len = DecodeFixed32(p);
  if (len > kMaxPayload || kRecordHeaderSize + len > limit - pos) return false;
  if (DecodeFixed64(p + 8) <= last_seqno) return false;
  uint32_t crc = crc32c::Value(p + kRecordCrcStart, kRecordHeaderSize - kRecordCrcStart + len);
  return crc == DecodeFixed32(p + 4);
}

// First offset after pos where a valid record starts, or limit if none.
uint64_t NextValid(const uint8_t* data, uint64_t pos, uint64_t limit, uint64_t last_seqno) {
  for (uint64_t q = pos + 1; q + kRecordHeaderSize <= limit; ++q) {
    if (ValidAt(data, q, limit, last_seqno)) return q;
  }
  return limit;
}

// An incomplete last record whose stored CRC matches some shorter length: the
// record is whole and its (unchecked) length field is what is damaged.
bool ShorterLengthIsValid(const uint8_t* p, uint64_t remaining) {
  if (remaining < kRecordHeaderSize) return false;
  const uint32_t want = DecodeFixed32(p + 4);
  uint32_t crc = crc32c::Value(p + kRecordCrcStart, kRecordHeaderSize - kRecordCrcStart);
  for (uint64_t len = 0;; ++len) {
    if (crc == want) return true;
    if (kRecordHeaderSize + len >= remaining) return false;
    crc = crc32c::Extend(crc, p + kRecordHeaderSize + len, 1);
  }
}

}  // namespace

Status ScanRecordsV1(const std::string& name, const uint8_t* data, uint64_t limit, bool salvage,
                     bool last, ScanState* state, std::vector<Damage>* damages,
                     ScanResult* result, const std::function<void(const RawRecord&)>& on_record) {
  uint64_t pos = state->offset;
  while (pos < limit) {
    const uint64_t remaining = limit - pos;
    const uint8_t* p = data + pos;
    DamageKind kind = DamageKind::kTornTail;
    std::string detail;
    if (remaining >= 4 && DecodeFixed32(p) > kMaxPayload) {
      kind = DamageKind::kBadLength;
      detail = "length " + std::to_string(DecodeFixed32(p)) + " exceeds the maximum " +
               std::to_string(kMaxPayload);
    } else if (remaining < kRecordHeaderSize || kRecordHeaderSize + DecodeFixed32(p) > remaining) {
      // Incomplete. A torn tail only at the end of the instance's last segment,
      // if no valid record follows and no shorter length makes it whole.
      uint64_t next = NextValid(data, pos, limit, state->last_seqno);
      if (next != limit) {
        kind = DamageKind::kBadLength;
        detail = "length runs past the end of the segment but valid records follow";
      } else if (!last) {
        kind = DamageKind::kTruncated;
        detail = "record cut short in a segment that has a successor";
      } else if (ShorterLengthIsValid(p, remaining)) {
        kind = DamageKind::kBadLength;
        detail = "length runs past the end, but a shorter length makes a whole record: the "
                 "length field is damaged";
      } else {
        result->torn_bytes = remaining;
        break;
      }
    } else {
      const uint32_t len = DecodeFixed32(p);
      const uint64_t seqno = DecodeFixed64(p + 8);
      const uint32_t want = DecodeFixed32(p + 4);
      const uint32_t got =
          crc32c::Value(p + kRecordCrcStart, kRecordHeaderSize - kRecordCrcStart + len);
      if (want != got && last && AllZero(p, remaining)) {
        result->torn_bytes = remaining;
        break;
      }
      if (want != got) {
        kind = DamageKind::kCrcMismatch;
        detail = "stored crc " + std::to_string(want) + ", computed " + std::to_string(got);
      } else if (seqno <= state->last_seqno) {
        kind = DamageKind::kSeqnoOrder;
        detail = "seqno " + std::to_string(seqno) + " is not above " +
                 std::to_string(state->last_seqno);
      } else {
        on_record(RawRecord{seqno, p[16], pos, p + kRecordHeaderSize, len});
        result->records++;
        state->records++;
        state->last_seqno = seqno;
        pos += kRecordHeaderSize + len;
        continue;
      }
    }
    if (!salvage) {
      state->offset = pos;
      return DamageStatus(kind, name, pos, detail);
    }
    uint64_t next = NextValid(data, pos, limit, state->last_seqno);
    damages->push_back(Damage{name, pos, next - pos, kind, detail});
    pos = next;
  }
  state->offset = pos;
  if (!last && pos >= limit) state->sealed = true;  // 1.0 has no seal: complete once a successor exists
  return Status::OK();
}

}  // namespace chitta::wal::scan
