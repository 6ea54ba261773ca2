// csrc/hnsw/hnsw_format.h
// Constants of the .hnsw sidecar file. Spec: FORMAT.md (v1.0, v2.0) beside this file.
// Change a value here only together with the spec and a version bump.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chitta::hnsw::format {

constexpr char kMagic[8] = {'C', 'H', 'I', 'T', 'H', 'N', 'S', 'W'};
constexpr uint16_t kMajor = 1;
constexpr uint16_t kMinor = 0;
constexpr uint32_t kHeaderSize = 64;  // v1.0 header; later minors may grow it
constexpr size_t kTrailerSize = 4;    // CRC-32C of bytes [8, file_size - 4)
constexpr uint32_t kNoEntry = 0xFFFFFFFFu;
constexpr uint8_t kFlagDeleted = 0x01;

// v2.0: a live node's vector may be a reference to the caller's row of its
// label (flag bit 1) instead of being stored; the header grows by 16 bytes.
constexpr uint16_t kMajorRefs = 2;
constexpr uint16_t kMinorRefs = 0;
constexpr uint32_t kHeaderSizeRefs = 80;
constexpr uint8_t kFlagRefVector = 0x02;
constexpr size_t kOffRefCount = 64;  // u64: nodes whose vector is a reference
constexpr size_t kOffRefCrc = 72;    // u32: CRC-32C of those vectors, prepared, in node order
constexpr size_t kOffRefReserved = 76;  // u32, zero

// Header field offsets.
constexpr size_t kOffMagic = 0;
constexpr size_t kOffMajor = 8;
constexpr size_t kOffMinor = 10;
constexpr size_t kOffHeaderSize = 12;
constexpr size_t kOffDim = 16;
constexpr size_t kOffM = 20;
constexpr size_t kOffEfConstruction = 24;
constexpr size_t kOffMetric = 28;
constexpr size_t kOffReserved = 29;  // 3 bytes, zero
constexpr size_t kOffNodeCount = 32;
constexpr size_t kOffLiveCount = 40;
constexpr size_t kOffEntryPoint = 48;
constexpr size_t kOffMaxLevel = 52;
constexpr size_t kOffRngState = 56;

}  // namespace chitta::hnsw::format
