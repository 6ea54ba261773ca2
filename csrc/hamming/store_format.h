// csrc/hamming/store_format.h
// Constants of the Hamming code file. Spec: FORMAT.md (v1.0) beside this file.
// Change a value here only together with the spec and a version bump.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chitta::hamming::format {

constexpr char kMagic[8] = {'C', 'H', 'I', 'T', 'H', 'A', 'M', '\0'};
constexpr uint16_t kMajor = 1;
constexpr uint16_t kMinor = 0;

constexpr size_t kMagicOffset = 0;
constexpr size_t kMajorOffset = 8;
constexpr size_t kMinorOffset = 10;
constexpr size_t kWordsOffset = 12;
constexpr size_t kCountOffset = 16;
constexpr size_t kHeaderSize = 24;
constexpr size_t kFooterSize = 4;  // CRC-32C of every byte before it

constexpr uint32_t kMaxWords = 1024;  // 65536-bit codes

inline size_t RecordSize(uint32_t words) { return 8 + 8 * static_cast<size_t>(words); }

}  // namespace chitta::hamming::format
