// csrc/util/sha256.h
// SHA-256 (FIPS 180-4), for the one place the core needs it: the default
// socket of a field's daemon is named by a hash of the field's path
// (docs/DAEMON.md), and the C API finds it the way Python does. Not a
// hot path; a plain portable implementation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace chitta::sha256 {

std::array<uint8_t, 32> Digest(const void* data, size_t n);

// Lower-case hex of the digest.
std::string HexDigest(const void* data, size_t n);

}  // namespace chitta::sha256
