// csrc/wal/segment_format.cc
#include "wal/segment_format.h"

#include <cstdio>
#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"

namespace chitta::wal {

std::string SegmentName(uint32_t instance_id, uint64_t first_seqno) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%08x_%012llu.seg", instance_id,
                static_cast<unsigned long long>(first_seqno));
  return buf;
}

bool ParseSegmentName(const std::string& name, uint32_t* instance_id, uint64_t* first_seqno) {
  // 8 hex digits, '_', at least 12 decimal digits, ".seg".
  if (name.size() < 8 + 1 + 12 + 4 || name.compare(name.size() - 4, 4, ".seg") != 0) return false;
  if (name[8] != '_') return false;
  uint32_t id = 0;
  for (int i = 0; i < 8; ++i) {
    char c = name[i];
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else return false;
    id = (id << 4) | static_cast<uint32_t>(v);
  }
  const size_t digits = name.size() - 4 - 9;
  if (digits > 20) return false;
  uint64_t seq = 0;
  for (size_t i = 9; i < 9 + digits; ++i) {
    char c = name[i];
    if (c < '0' || c > '9') return false;
    uint64_t next = seq * 10 + static_cast<uint64_t>(c - '0');
    if (next / 10 != seq) return false;  // overflow
    seq = next;
  }
  if (SegmentName(id, seq) != name) return false;  // canonical form only
  *instance_id = id;
  *first_seqno = seq;
  return true;
}

void EncodeHeader(uint32_t instance_id, uint64_t first_seqno, uint8_t out[kHeaderSize]) {
  std::memcpy(out, kSegmentMagic, 8);
  EncodeFixed16(out + 8, kFormatMajor);
  EncodeFixed16(out + 10, kFormatMinor);
  EncodeFixed32(out + 12, instance_id);
  EncodeFixed64(out + 16, first_seqno);
  EncodeFixed32(out + 24, 0);
  EncodeFixed32(out + kHeaderCrcOffset, crc32c::Value(out, kHeaderCrcOffset));
}

void EncodeRecordV2(uint8_t* out, uint64_t seqno, uint8_t op_type, const uint8_t* data,
                    uint32_t n) {
  EncodeFixed32(out, n);
  EncodeFixed64(out + 4, seqno);
  out[12] = op_type;
  EncodeFixed32(out + kHeaderCrcAtV2, crc32c::Value(out, kHeaderCrcAtV2));
  if (n > 0) std::memcpy(out + kRecordHeaderSizeV2, data, n);
  EncodeFixed32(out + kPayloadCrcAtV2, crc32c::Value(out + kRecordHeaderSizeV2, n));
}

void EncodeSeal(uint8_t* out, uint64_t last_seqno, uint64_t records, uint64_t at) {
  uint8_t payload[kSealPayload];
  EncodeFixed64(payload, records);
  EncodeFixed64(payload + 8, at + kSealBytes);
  EncodeRecordV2(out, last_seqno, kSealOpType, payload, kSealPayload);
}

}  // namespace chitta::wal
