// csrc/posting/posting_format.h
// Constants of the posting index file (save/load). Spec: FORMAT.md (v1.0).
// Change a value here only together with the spec and a version bump.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chitta::posting::format {

inline constexpr char kMagic[8] = {'C', 'H', 'P', 'O', 'S', 'T', 'I', 'X'};
inline constexpr uint16_t kMajor = 1;
inline constexpr uint16_t kMinor = 0;
inline constexpr uint32_t kHeaderBytes = 40;   // v1.0 header size
inline constexpr uint32_t kFlagActivations = 1u << 0;  // activation rows follow features
inline constexpr uint32_t kKnownFlags = kFlagActivations;
inline constexpr size_t kTrailerBytes = 4;     // CRC-32C of every byte before it

// Header field offsets.
inline constexpr size_t kOffMagic = 0;
inline constexpr size_t kOffMajor = 8;
inline constexpr size_t kOffMinor = 10;
inline constexpr size_t kOffHeaderBytes = 12;
inline constexpr size_t kOffNFeatures = 16;
inline constexpr size_t kOffActive = 20;
inline constexpr size_t kOffFlags = 24;
inline constexpr size_t kOffReserved = 28;
inline constexpr size_t kOffCount = 32;

}  // namespace chitta::posting::format
