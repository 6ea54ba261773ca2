// csrc/util/crc32c.h
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI,
// ext4 and leveldb. Extend() picks the SSE4.2 instruction path when util/cpu.h
// allows it (CPU features, env CHITTA_SIMD's cap: level sse42) and the portable
// table path otherwise; both give the same bits
// (crc32c_test.cc checks them against the RFC 3720 vectors and each other).
#pragma once

#include <cstddef>
#include <cstdint>

#include "util/cpu.h"

namespace chitta::crc32c {

// Continue a CRC over more bytes. Start a new CRC with crc = 0.
uint32_t Extend(uint32_t crc, const void* data, size_t n);
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

// The two implementations, exposed for tests and benchmarks.
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n);
uint32_t ExtendSse42(uint32_t crc, const void* data, size_t n);  // needs HasSse42()
// The features crc32c_sse42.cc is built with (CMakeLists.txt; the file
// static_asserts it) and so needs: -msse4.2 -mpopcnt.
inline constexpr uint32_t kSse42Features = cpu::kSse42Base;
bool HasSse42();  // the CPU can run ExtendSse42 (ignores CHITTA_SIMD)
using ExtendFn = uint32_t (*)(uint32_t crc, const void* data, size_t n);
// The best implementation this CPU runs at or below level `cap`.
ExtendFn ExtendFor(cpu::Level cap);
const char* Implementation();  // the one Extend() uses: "sse4.2" or "portable"

}  // namespace chitta::crc32c
