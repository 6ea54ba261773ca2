// csrc/wal/segment_format.h
// Constants shared by the segment reader and writer. Spec: docs/FORMAT.md
// (segment formats 2.0, written, and 1.0, still read). Change a value here
// only together with the spec and a version bump.
#pragma once

#include <cstdint>
#include <string>

namespace chitta::wal {

// Segment header: magic[8] major u16 minor u16 instance u32 first_seqno u64
// reserved u32 header_crc u32 (CRC-32C of bytes 0..27).
constexpr uint8_t kSegmentMagic[8] = {'C', 'H', 'I', 'T', 'T', 'A', 'S', 'G'};
constexpr uint16_t kFormatMajor = 2;   // what writers write
constexpr uint16_t kOldestMajor = 1;   // the oldest layout readers still read
constexpr uint16_t kFormatMinor = 0;
constexpr size_t kHeaderSize = 32;
constexpr size_t kHeaderCrcOffset = 28;

// Record 1.0: len u32 | crc u32 | seqno u64 | op_type u8 | payload[len].
// crc = CRC-32C over seqno, op_type and payload (bytes 8 .. 17+len).
constexpr size_t kRecordHeaderSize = 17;
constexpr size_t kRecordCrcStart = 8;
constexpr uint32_t kMaxPayload = 64u << 20;  // 64 MiB: larger lengths are damage

// Record 2.0: len u32 | seqno u64 | op_type u8 | header_crc u32 | payload_crc u32 |
// payload[len]. header_crc = CRC of bytes 0..12 (so the length is trusted before
// it is used); payload_crc = CRC of the payload alone.
constexpr size_t kRecordHeaderSizeV2 = 21;
constexpr size_t kHeaderCrcAtV2 = 13;
constexpr size_t kPayloadCrcAtV2 = 17;
// The seal: the last record of a rotated segment, op type 255, seqno = the
// segment's last record's, payload = records u64 | size u64 (the segment's
// final size, the seal included). Never handed out as a record.
constexpr uint8_t kSealOpType = 255;
constexpr uint32_t kSealPayload = 16;
constexpr size_t kSealBytes = kRecordHeaderSizeV2 + kSealPayload;

// Record header size of a segment of this major version.
inline size_t RecordHeaderSize(uint16_t major) {
  return major >= 2 ? kRecordHeaderSizeV2 : kRecordHeaderSize;
}
// Writes one 2.0 record (kRecordHeaderSizeV2 + n bytes) to out.
void EncodeRecordV2(uint8_t* out, uint64_t seqno, uint8_t op_type, const uint8_t* data,
                    uint32_t n);
// Writes the 2.0 seal of a segment holding `records` records, whose last seqno
// is last_seqno and whose seal starts at offset `at` (kSealBytes bytes).
void EncodeSeal(uint8_t* out, uint64_t last_seqno, uint64_t records, uint64_t at);

constexpr uint64_t kDefaultSegmentBytes = 256ull << 20;
constexpr uint64_t kMinSegmentBytes = 1024;

// {instance_id:08x}_{first_seqno:012}.seg
std::string SegmentName(uint32_t instance_id, uint64_t first_seqno);
// Parses a segment file name; false for anything else (temp files, ...).
bool ParseSegmentName(const std::string& name, uint32_t* instance_id, uint64_t* first_seqno);

// Builds the 32-byte header.
void EncodeHeader(uint32_t instance_id, uint64_t first_seqno, uint8_t out[kHeaderSize]);

}  // namespace chitta::wal
