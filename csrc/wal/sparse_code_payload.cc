// csrc/wal/sparse_code_payload.cc
#include "wal/sparse_code_payload.h"

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

}  // namespace chitta::wal
