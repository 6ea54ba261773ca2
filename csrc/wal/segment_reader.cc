// csrc/wal/segment_reader.cc
#include "wal/segment_reader.h"

#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/segment_format.h"

namespace chitta::wal {

const char* DamageKindName(DamageKind kind) {
  switch (kind) {
    case DamageKind::kTornTail: return "torn_tail";
    case DamageKind::kBadMagic: return "bad_magic";
    case DamageKind::kFutureVersion: return "future_version";
    case DamageKind::kBadHeader: return "bad_header";
    case DamageKind::kBadLength: return "bad_length";
    case DamageKind::kCrcMismatch: return "crc_mismatch";
    case DamageKind::kSeqnoOrder: return "seqno_order";
  }
  return "unknown";
}

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

// Zero bytes up to the end: space the file system extended but never filled
// (e.g. after a power loss). Treated like any unfinished write.
bool AllZero(const uint8_t* p, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

// First offset after pos where a valid record starts, or limit if none.
uint64_t NextValid(const uint8_t* data, uint64_t pos, uint64_t limit, uint64_t last_seqno) {
  for (uint64_t q = pos + 1; q + kRecordHeaderSize <= limit; ++q) {
    if (ValidAt(data, q, limit, last_seqno)) return q;
  }
  return limit;
}

Status DamageStatus(DamageKind kind, const std::string& name, uint64_t offset,
                    const std::string& detail) {
  std::string msg = std::string(DamageKindName(kind)) + " in segment " + name + " at offset " +
                    std::to_string(offset) + ": " + detail;
  Status st = kind == DamageKind::kCrcMismatch   ? Status::CrcMismatch(msg)
              : kind == DamageKind::kFutureVersion ? Status::Unsupported(msg)
                                                   : Status::Corruption(msg);
  return std::move(st).At(name, static_cast<int64_t>(offset));
}

Status CheckHeader(const std::string& name, uint32_t instance_id, uint64_t first_seqno,
                   const uint8_t* data, DamageKind* kind, std::string* detail) {
  if (std::memcmp(data, kSegmentMagic, 8) != 0) {
    *kind = DamageKind::kBadMagic;
    *detail = "not a chitta segment";
    return Status::Corruption("");
  }
  uint16_t major = DecodeFixed16(data + 8);
  if (major > kFormatMajor) {
    *kind = DamageKind::kFutureVersion;
    *detail = "format major version " + std::to_string(major) + " is newer than this reader (" +
              std::to_string(kFormatMajor) + ")";
    return Status::Unsupported("");
  }
  if (major == 0 || DecodeFixed32(data + kHeaderCrcOffset) != crc32c::Value(data, kHeaderCrcOffset)) {
    *kind = DamageKind::kBadHeader;
    *detail = "header checksum mismatch";
    return Status::Corruption("");
  }
  if (DecodeFixed32(data + 12) != instance_id || DecodeFixed64(data + 16) != first_seqno ||
      first_seqno == 0) {
    *kind = DamageKind::kBadHeader;
    *detail = "header does not match the file name " + name;
    return Status::Corruption("");
  }
  return Status::OK();
}

}  // namespace

Status ScanSegment(const std::string& name, uint32_t instance_id, uint64_t first_seqno,
                   const uint8_t* data, uint64_t limit, bool salvage, ScanState* state,
                   std::vector<Damage>* damages, ScanResult* result,
                   const std::function<void(const RawRecord&)>& on_record) {
  *result = ScanResult{};
  if (state->dead) return Status::OK();
  if (!state->header_ok) {
    if (limit < kHeaderSize) {  // header still being written, or torn at creation
      result->torn_bytes = limit;
      return Status::OK();
    }
    DamageKind kind;
    std::string detail;
    if (!CheckHeader(name, instance_id, first_seqno, data, &kind, &detail).ok()) {
      if (!salvage) return DamageStatus(kind, name, 0, detail);
      damages->push_back(Damage{name, 0, limit, kind, detail});
      state->dead = true;
      state->offset = limit;
      return Status::OK();
    }
    state->header_ok = true;
    state->offset = kHeaderSize;
    state->last_seqno = first_seqno - 1;
  }

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
      // Incomplete. A torn tail only if no valid record follows; otherwise the
      // length field itself is damaged and framing was lost.
      uint64_t next = NextValid(data, pos, limit, state->last_seqno);
      if (next == limit) {
        result->torn_bytes = remaining;
        break;
      }
      kind = DamageKind::kBadLength;
      detail = "length runs past the end of the segment but valid records follow";
    } else {
      const uint32_t len = DecodeFixed32(p);
      const uint64_t seqno = DecodeFixed64(p + 8);
      const uint32_t want = DecodeFixed32(p + 4);
      const uint32_t got =
          crc32c::Value(p + kRecordCrcStart, kRecordHeaderSize - kRecordCrcStart + len);
      if (want != got && AllZero(p, remaining)) {
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
  return Status::OK();
}

}  // namespace chitta::wal
