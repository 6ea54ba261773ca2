// csrc/util/crc32c.cc
// Portable slicing-by-8 CRC-32C and the run-time choice of implementation
// (util/cpu.h).
#include "util/crc32c.h"

#include <array>
#include <cstring>

namespace chitta::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    }
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

ExtendFn Chosen() {
  static const ExtendFn fn = ExtendFor(cpu::Cap());
  return fn;
}

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n) {
  const auto& t = GetTables().t;
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo;
    uint32_t hi;
    std::memcpy(&lo, p, 4);  // little-endian hosts only (x86-64, aarch64)
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
        t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
  return ~c;
}

bool HasSse42() { return cpu::Supports(kSse42Features); }

ExtendFn ExtendFor(cpu::Level cap) {
  return static_cast<int>(cap) >= static_cast<int>(cpu::Level::kSse42) && HasSse42()
             ? &ExtendSse42
             : &ExtendPortable;
}

const char* Implementation() { return Chosen() == &ExtendSse42 ? "sse4.2" : "portable"; }

uint32_t Extend(uint32_t crc, const void* data, size_t n) { return Chosen()(crc, data, n); }

}  // namespace chitta::crc32c
