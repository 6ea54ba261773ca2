// csrc/wal/sparse_code_payload.cc
#include "wal/sparse_code_payload.h"

#include <cmath>
#include <cstring>
#include <string_view>

#include "wal/msgpack_reader.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "sparse_code_payload.cc copies float32 bytes as they are: little-endian hosts only");

namespace chitta::wal {

bool ParseSparseCode(const uint8_t* p, size_t n, uint32_t active, uint64_t* id, uint32_t* features,
                     float* activations, uint32_t* encoder_version) {
  MsgpackReader r{p, p + n};
  uint64_t fields;
  if (!r.ArrayHeader(&fields) || fields < 3 || fields > 4) return false;
  if (!r.U64(id)) return false;
  uint64_t count;
  if (!r.ArrayHeader(&count) || count != active) return false;
  for (uint32_t i = 0; i < active; ++i) {
    uint64_t f;
    if (!r.U64(&f) || f > UINT32_MAX) return false;
    features[i] = static_cast<uint32_t>(f);
  }
  std::string_view acts;
  if (!r.Bin(&acts) || acts.size() != size_t{4} * active) return false;
  std::memcpy(activations, acts.data(), acts.size());  // little-endian hosts (x86-64, aarch64)
  uint64_t version = 0;
  if (fields == 4 && (!r.U64(&version) || version > UINT32_MAX)) return false;
  *encoder_version = static_cast<uint32_t>(version);
  return r.p == r.end;
}

bool ParsePackedSparseCode(const uint8_t* p, size_t n, uint32_t active, uint64_t* id,
                           uint32_t* features, float* activations, uint32_t* encoder_version) {
  MsgpackReader r{p, p + n};
  uint64_t fields;
  if (!r.ArrayHeader(&fields) || fields < 4 || fields > 5) return false;
  if (!r.U64(id)) return false;
  std::string_view deltas, levels;
  if (!r.Bin(&deltas) || deltas.size() != size_t{2} * active) return false;
  if (!r.Bin(&levels) || levels.size() != active) return false;
  double scale64;
  if (!r.Double(&scale64)) return false;
  const float scale = static_cast<float>(scale64);
  if (!std::isfinite(scale) || !(scale >= 0.0f)) return false;
  uint64_t version = 0;
  if (fields == 5 && (!r.U64(&version) || version > UINT32_MAX)) return false;
  if (r.p != r.end) return false;
  const auto* d = reinterpret_cast<const uint8_t*>(deltas.data());
  const auto* l = reinterpret_cast<const uint8_t*>(levels.data());
  uint32_t sum = 0;
  for (uint32_t i = 0; i < active; ++i) {
    const uint32_t step = uint32_t{d[2 * i]} | (uint32_t{d[2 * i + 1]} << 8);  // little-endian u16
    if (i > 0 && step == 0) return false;  // ids ascending and unique
    sum += step;
    features[i] = sum;
    activations[i] = static_cast<float>(l[i]) * scale;
  }
  *encoder_version = static_cast<uint32_t>(version);
  return true;
}

}  // namespace chitta::wal
