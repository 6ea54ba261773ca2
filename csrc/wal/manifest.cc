// csrc/wal/manifest.cc
#include "wal/manifest.h"

#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"

namespace chitta::wal {

// magic[8] major u16 minor u16 count u32 | entries[count] x 32 | crc32c u32
std::string EncodeManifest(const std::vector<ManifestEntry>& entries) {
  std::string out(16 + entries.size() * kManifestEntrySize + 4, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  std::memcpy(p, kManifestMagic, 8);
  EncodeFixed16(p + 8, 1);
  EncodeFixed16(p + 10, 0);
  EncodeFixed32(p + 12, static_cast<uint32_t>(entries.size()));
  uint8_t* e = p + 16;
  for (const auto& m : entries) {
    EncodeFixed32(e, m.instance_id);
    EncodeFixed32(e + 4, 0);
    EncodeFixed64(e + 8, m.max_seqno);
    EncodeFixed64(e + 16, m.last_first_seqno);
    EncodeFixed64(e + 24, m.last_size);
    e += kManifestEntrySize;
  }
  EncodeFixed32(e, crc32c::Value(p, static_cast<size_t>(e - p)));
  return out;
}

Status DecodeManifest(const std::string& bytes, std::vector<ManifestEntry>* entries) {
  entries->clear();
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 20 || std::memcmp(p, kManifestMagic, 8) != 0) {
    return Status::Corruption("MANIFEST: bad magic or too short");
  }
  if (DecodeFixed16(p + 8) != 1) return Status::Unsupported("MANIFEST: unknown major version");
  const uint32_t count = DecodeFixed32(p + 12);
  if (count > kManifestMaxEntries ||
      bytes.size() != 16 + static_cast<uint64_t>(count) * kManifestEntrySize + 4) {
    return Status::Corruption("MANIFEST: entry count does not match the file size");
  }
  const size_t body = bytes.size() - 4;
  if (DecodeFixed32(p + body) != crc32c::Value(p, body)) {
    return Status::Corruption("MANIFEST: checksum mismatch");
  }
  entries->reserve(count);
  const uint8_t* e = p + 16;
  for (uint32_t i = 0; i < count; ++i, e += kManifestEntrySize) {
    entries->push_back(ManifestEntry{DecodeFixed32(e), DecodeFixed64(e + 8), DecodeFixed64(e + 16),
                                     DecodeFixed64(e + 24)});
  }
  return Status::OK();
}

}  // namespace chitta::wal
