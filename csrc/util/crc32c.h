// csrc/util/crc32c.h
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI,
// ext4 and leveldb. Extend() picks the SSE4.2 instruction path when the CPU
// has it and the portable table path otherwise; both give the same bits
// (crc32c_test.cc checks them against the RFC 3720 vectors and each other).
#pragma once

#include <cstddef>
#include <cstdint>

namespace chitta::crc32c {

// Continue a CRC over more bytes. Start a new CRC with crc = 0.
uint32_t Extend(uint32_t crc, const void* data, size_t n);
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

// The two implementations, exposed for tests and benchmarks.
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n);
uint32_t ExtendSse42(uint32_t crc, const void* data, size_t n);  // needs HasSse42()
bool HasSse42();
const char* Implementation();  // "sse4.2" or "portable"

}  // namespace chitta::crc32c
