// csrc/wal/sparse_code_payload.h
// The UpdateSparseCode op's msgpack payload (docs/OPS.md, op 4) without
// Python: [id, features, activations, encoder_version?], the array msgspec
// writes for chitta.ops.UpdateSparseCode. Replay of a large field decodes a
// million of these; ParseSparseCode reads them straight into caller arrays.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chitta::wal {

// Parses one payload whose code has exactly `active` features into
// features[0..active) and activations[0..active) (little-endian float32 bytes
// copied as they are). True only for exactly one msgpack array of 3 or 4
// elements: a uint id, an array of `active` uints that fit in 32 bits, a bin of
// 4 * `active` bytes, and (when present) a uint version that fits in 32 bits,
// with nothing after it. False for anything else (another feature count,
// other types, damage, trailing bytes); the caller decodes those records the
// general way, which reports damage.
bool ParseSparseCode(const uint8_t* p, size_t n, uint32_t active, uint64_t* id, uint32_t* features,
                     float* activations, uint32_t* encoder_version);

}  // namespace chitta::wal
