// csrc/wal/segment_reader.cc
#include "wal/segment_reader.h"

#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/segment_format.h"
#include "wal/segment_scan.h"

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
    case DamageKind::kBadRecordHeader: return "bad_record_header";
    case DamageKind::kTruncated: return "truncated";
    case DamageKind::kMissingSeal: return "missing_seal";
    case DamageKind::kBadSeal: return "bad_seal";
  }
  return "unknown";
}

namespace scan {

bool AllZero(const uint8_t* p, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
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

}  // namespace scan

namespace {

bool CheckHeader(const std::string& name, uint32_t instance_id, uint64_t first_seqno,
                 const uint8_t* data, DamageKind* kind, std::string* detail) {
  if (std::memcmp(data, kSegmentMagic, 8) != 0) {
    *kind = DamageKind::kBadMagic;
    *detail = "not a chitta segment";
    return false;
  }
  uint16_t major = DecodeFixed16(data + 8);
  if (major > kFormatMajor) {
    *kind = DamageKind::kFutureVersion;
    *detail = "format major version " + std::to_string(major) + " is newer than this reader (" +
              std::to_string(kFormatMajor) + "): upgrade chitta to read it";
    return false;
  }
  if (major < kOldestMajor ||
      DecodeFixed32(data + kHeaderCrcOffset) != crc32c::Value(data, kHeaderCrcOffset)) {
    *kind = DamageKind::kBadHeader;
    *detail = "header checksum mismatch";
    return false;
  }
  if (DecodeFixed32(data + 12) != instance_id || DecodeFixed64(data + 16) != first_seqno ||
      first_seqno == 0) {
    *kind = DamageKind::kBadHeader;
    *detail = "header does not match the file name " + name;
    return false;
  }
  return true;
}

}  // namespace

Status ScanSegment(const std::string& name, uint32_t instance_id, uint64_t first_seqno,
                   const uint8_t* data, uint64_t limit, bool salvage, bool last, ScanState* state,
                   std::vector<Damage>* damages, ScanResult* result,
                   const std::function<void(const RawRecord&)>& on_record) {
  *result = ScanResult{};
  if (state->dead || state->sealed) return Status::OK();
  if (!state->header_ok) {
    if (limit < kHeaderSize) {
      if (last) {  // header still being written, or torn at creation
        result->torn_bytes = limit;
        return Status::OK();
      }
      const std::string detail = "the segment header is cut short (" + std::to_string(limit) +
                                 " bytes) although a later segment of its instance exists";
      if (!salvage) return scan::DamageStatus(DamageKind::kTruncated, name, 0, detail);
      damages->push_back(Damage{name, 0, limit, DamageKind::kTruncated, detail});
      state->dead = true;
      state->offset = limit;
      return Status::OK();
    }
    DamageKind kind;
    std::string detail;
    if (!CheckHeader(name, instance_id, first_seqno, data, &kind, &detail)) {
      if (!salvage) return scan::DamageStatus(kind, name, 0, detail);
      damages->push_back(Damage{name, 0, limit, kind, detail});
      state->dead = true;
      state->offset = limit;
      return Status::OK();
    }
    state->header_ok = true;
    state->major = DecodeFixed16(data + 8);
    state->offset = kHeaderSize;
    state->last_seqno = first_seqno - 1;
    state->records = 0;
    state->counted = true;
  }
  if (state->major == 0) {  // resumed from a recorded position: the header tells the layout
    if (limit < kHeaderSize) return Status::OK();
    state->major = DecodeFixed16(data + 8);
    if (state->major < kOldestMajor || state->major > kFormatMajor) {
      return scan::DamageStatus(DamageKind::kBadHeader, name, 0,
                                "the header changed since its position was recorded");
    }
  }
  return state->major >= 2 ? scan::ScanRecordsV2(name, data, limit, salvage, last, state, damages,
                                                 result, on_record)
                           : scan::ScanRecordsV1(name, data, limit, salvage, last, state, damages,
                                                 result, on_record);
}

}  // namespace chitta::wal
