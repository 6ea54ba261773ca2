// csrc/wal/sparse_code_payload.h
// The UpdateSparseCode op's msgpack payload (docs/OPS.md, op 12) without
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

// The packed code (op 68, UpdateSparseCodeU8): [id, feature_deltas, levels,
// scale, encoder_version?]. Parses one payload of exactly `active` features:
// features are the running sums of the u16 deltas, activations
// float32(level) * float32(scale) (one float32 product, as
// chitta.ops.UpdateSparseCodeU8.activations computes it). False for anything
// else, including what validate() refuses (a later delta of 0, a scale that is
// negative or not a finite float32): the general decoder then reports it.
bool ParsePackedSparseCode(const uint8_t* p, size_t n, uint32_t active, uint64_t* id,
                           uint32_t* features, float* activations, uint32_t* encoder_version);

}  // namespace chitta::wal
