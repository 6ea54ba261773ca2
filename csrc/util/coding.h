// csrc/util/coding.h
// Fixed-width little-endian encoding. Every on-disk integer in chitta is
// little-endian regardless of the host.
#pragma once

#include <cstdint>
#include <cstring>

namespace chitta {

inline void EncodeFixed16(uint8_t* dst, uint16_t v) {
  dst[0] = static_cast<uint8_t>(v);
  dst[1] = static_cast<uint8_t>(v >> 8);
}
inline void EncodeFixed32(uint8_t* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void EncodeFixed64(uint8_t* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint16_t DecodeFixed16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline uint32_t DecodeFixed32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t DecodeFixed64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

namespace coding {

// Host-order copies for files whose writers assert a little-endian host
// (static_assert beside their memcpy'd arrays): one instruction each.
template <typename T>
void PutLE(uint8_t* dst, T v) {
  std::memcpy(dst, &v, sizeof(T));
}
template <typename T>
T GetLE(const uint8_t* src) {
  T v;
  std::memcpy(&v, src, sizeof(T));
  return v;
}

}  // namespace coding
}  // namespace chitta
