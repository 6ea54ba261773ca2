// csrc/bm25/bm25_format.h
// Constants of the BM25 index file ("bm25.idx", a checkpoint sidecar).
// Spec: docs/FORMAT.md section 8 (normative), v1.0.
// Change a value here only together with the spec and a version bump.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chitta::bm25::format {

inline constexpr char kMagic[8] = {'C', 'H', 'I', 'T', 'B', 'M', '2', '5'};
inline constexpr uint16_t kMajor = 1;
inline constexpr uint16_t kMinor = 0;
inline constexpr uint32_t kHeaderBytes = 80;  // v1.0 header size
inline constexpr uint32_t kFlagStem = 1u << 0;
inline constexpr uint32_t kFlagStopwords = 1u << 1;
inline constexpr uint32_t kKnownFlags = kFlagStem | kFlagStopwords;
inline constexpr size_t kTrailerBytes = 4;  // CRC-32C of every byte before it
inline constexpr size_t kBigTfBytes = 12;   // u32 term, u32 ordinal, u32 tf

// Header field offsets.
inline constexpr size_t kOffMagic = 0;
inline constexpr size_t kOffMajor = 8;
inline constexpr size_t kOffMinor = 10;
inline constexpr size_t kOffHeaderBytes = 12;
inline constexpr size_t kOffFlags = 16;
inline constexpr size_t kOffReserved = 20;
inline constexpr size_t kOffK1 = 24;
inline constexpr size_t kOffB = 32;
inline constexpr size_t kOffDocs = 40;
inline constexpr size_t kOffTerms = 48;
inline constexpr size_t kOffPostings = 56;
inline constexpr size_t kOffTermBytes = 64;
inline constexpr size_t kOffBigTfs = 72;

}  // namespace chitta::bm25::format
