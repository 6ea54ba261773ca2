// csrc/wal/segment_scan_v2.cc
// Records of layout 2.0: len | seqno | op_type | header_crc | payload_crc |
// payload. The header is checked before its length is trusted, so a record
// that runs past the end is an unfinished write only when its header is whole
// and verifies and the segment is its instance's last; a rotated segment ends
// with a seal recording its size and record count.
#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/segment_format.h"
#include "wal/segment_scan.h"

namespace chitta::wal::scan {

namespace {

bool HeaderOk(const uint8_t* p) {
  return crc32c::Value(p, kHeaderCrcAtV2) == DecodeFixed32(p + kHeaderCrcAtV2);
}

bool PayloadOk(const uint8_t* p, uint32_t len) {
  return crc32c::Value(p + kRecordHeaderSizeV2, len) == DecodeFixed32(p + kPayloadCrcAtV2);
}

// A whole record at pos (a seal included) with both CRCs matching and a seqno
// in order: where salvage resumes after damage.
bool ValidAt(const uint8_t* data, uint64_t pos, uint64_t limit, uint64_t last_seqno) {
  if (limit - pos < kRecordHeaderSizeV2) return false;
  const uint8_t* p = data + pos;
  if (!HeaderOk(p)) return false;
  const uint32_t len = DecodeFixed32(p);
  if (len > kMaxPayload || kRecordHeaderSizeV2 + len > limit - pos) return false;
  const uint64_t seqno = DecodeFixed64(p + 4);
  if (p[12] == kSealOpType ? seqno < last_seqno : seqno <= last_seqno) return false;
  return PayloadOk(p, len);
}

uint64_t NextValid(const uint8_t* data, uint64_t pos, uint64_t limit, uint64_t last_seqno) {
  for (uint64_t q = pos + 1; q + kRecordHeaderSizeV2 <= limit; ++q) {
    if (ValidAt(data, q, limit, last_seqno)) return q;
  }
  return limit;
}

// The seal at pos (header and payload CRCs already checked): empty if it
// agrees with the segment, else why not.
std::string SealProblem(const uint8_t* p, uint32_t len, uint64_t pos, uint64_t limit,
                        const ScanState& st, bool damaged) {
  if (len != kSealPayload) return "seal payload of " + std::to_string(len) + " bytes";
  const uint64_t records = DecodeFixed64(p + kRecordHeaderSizeV2);
  const uint64_t size = DecodeFixed64(p + kRecordHeaderSizeV2 + 8);
  const uint64_t seqno = DecodeFixed64(p + 4);
  if (size != pos + kSealBytes) {
    return "the seal records a size of " + std::to_string(size) + " but sits at offset " +
           std::to_string(pos) + " (records are missing or were added)";
  }
  if (limit > size) return std::to_string(limit - size) + " bytes follow the seal";
  if (damaged) return "";  // salvage skipped records: count and seqno cannot agree
  if (seqno != st.last_seqno) {
    return "the seal names last seqno " + std::to_string(seqno) + ", the segment's is " +
           std::to_string(st.last_seqno);
  }
  if (st.counted && records != st.records) {
    return "the seal counts " + std::to_string(records) + " records, the segment holds " +
           std::to_string(st.records);
  }
  return "";
}

}  // namespace

Status ScanRecordsV2(const std::string& name, const uint8_t* data, uint64_t limit, bool salvage,
                     bool last, ScanState* state, std::vector<Damage>* damages,
                     ScanResult* result, const std::function<void(const RawRecord&)>& on_record) {
  uint64_t pos = state->offset;
  bool damaged = false;
  while (pos < limit) {
    const uint64_t remaining = limit - pos;
    const uint8_t* p = data + pos;
    DamageKind kind;
    std::string detail;
    if (remaining < kRecordHeaderSizeV2) {
      if (last) {  // part of a header: an unfinished write
        result->torn_bytes = remaining;
        break;
      }
      kind = DamageKind::kTruncated;
      detail = "a record header is cut short in a segment that has a successor";
    } else if (!HeaderOk(p)) {
      if (last && AllZero(p, remaining)) {
        result->torn_bytes = remaining;
        break;
      }
      kind = DamageKind::kBadRecordHeader;
      detail = "record header checksum mismatch (length, seqno or op type damaged)";
    } else if (DecodeFixed32(p) > kMaxPayload) {
      kind = DamageKind::kBadLength;
      detail = "length " + std::to_string(DecodeFixed32(p)) + " exceeds the maximum " +
               std::to_string(kMaxPayload);
    } else if (kRecordHeaderSizeV2 + DecodeFixed32(p) > remaining) {
      if (last) {  // a verified header whose bytes are not all there yet
        result->torn_bytes = remaining;
        break;
      }
      kind = DamageKind::kTruncated;
      detail = "a record of " + std::to_string(DecodeFixed32(p)) +
               " payload bytes runs past the end of a segment that has a successor";
    } else {
      const uint32_t len = DecodeFixed32(p);
      const uint64_t seqno = DecodeFixed64(p + 4);
      if (!PayloadOk(p, len)) {
        kind = DamageKind::kCrcMismatch;
        detail = "payload crc mismatch";
      } else if (p[12] == kSealOpType) {
        detail = SealProblem(p, len, pos, limit, *state, damaged);
        if (detail.empty()) {
          state->sealed = true;
          state->offset = pos;  // positions stay before the seal: a resumed read checks it again
          return Status::OK();
        }
        kind = DamageKind::kBadSeal;
      } else if (seqno <= state->last_seqno) {
        kind = DamageKind::kSeqnoOrder;
        detail = "seqno " + std::to_string(seqno) + " is not above " +
                 std::to_string(state->last_seqno);
      } else {
        on_record(RawRecord{seqno, p[12], pos, p + kRecordHeaderSizeV2, len});
        result->records++;
        state->records++;
        state->last_seqno = seqno;
        pos += kRecordHeaderSizeV2 + len;
        continue;
      }
    }
    if (!salvage) {
      state->offset = pos;
      return DamageStatus(kind, name, pos, detail);
    }
    damaged = true;
    const uint64_t next = NextValid(data, pos, limit, state->last_seqno);
    damages->push_back(Damage{name, pos, next - pos, kind, detail});
    pos = next;
  }
  state->offset = pos;
  if (!last && !state->sealed) {
    if (!damaged) {
      const std::string detail =
          "the segment has a successor but ends without its seal (cut on a record boundary)";
      if (!salvage) return DamageStatus(DamageKind::kMissingSeal, name, pos, detail);
      damages->push_back(Damage{name, pos, 0, DamageKind::kMissingSeal, detail});
    }
    state->sealed = true;  // nothing more can come: a successor exists
  }
  return Status::OK();
}

}  // namespace chitta::wal::scan
