// csrc/wal/segment_format.h
// Constants shared by the segment reader and writer. Spec: docs/FORMAT.md
// (segment format 1.0). Change a value here only together with the spec and a
// version bump.
#pragma once

#include <cstdint>
#include <string>

namespace chitta::wal {

// Segment header: magic[8] major u16 minor u16 instance u32 first_seqno u64
// reserved u32 header_crc u32 (CRC-32C of bytes 0..27).
constexpr uint8_t kSegmentMagic[8] = {'C', 'H', 'I', 'T', 'T', 'A', 'S', 'G'};
constexpr uint16_t kFormatMajor = 1;
constexpr uint16_t kFormatMinor = 0;
constexpr size_t kHeaderSize = 32;
constexpr size_t kHeaderCrcOffset = 28;

// Record: len u32 | crc u32 | seqno u64 | op_type u8 | payload[len].
// crc = CRC-32C over seqno, op_type and payload (bytes 8 .. 17+len).
constexpr size_t kRecordHeaderSize = 17;
constexpr size_t kRecordCrcStart = 8;
constexpr uint32_t kMaxPayload = 64u << 20;  // 64 MiB: larger lengths are damage

constexpr uint64_t kDefaultSegmentBytes = 256ull << 20;
constexpr uint64_t kMinSegmentBytes = 1024;

// {instance_id:08x}_{first_seqno:012}.seg
std::string SegmentName(uint32_t instance_id, uint64_t first_seqno);
// Parses a segment file name; false for anything else (temp files, ...).
bool ParseSegmentName(const std::string& name, uint32_t* instance_id, uint64_t* first_seqno);

// Builds the 32-byte header.
void EncodeHeader(uint32_t instance_id, uint64_t first_seqno, uint8_t out[kHeaderSize]);

}  // namespace chitta::wal
