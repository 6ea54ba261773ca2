// csrc/util/sidecar_file.cc
// The shared sidecar framing checks (sidecar_file.h).
#include "util/sidecar_file.h"

#include "util/coding.h"
#include "util/crc32c.h"

namespace chitta::sidecar {

SizeSum& SizeSum::Add(uint64_t count, uint64_t unit) {
  if (overflowed_) return *this;
  if (unit != 0 && count > (UINT64_MAX - value_) / unit) {
    overflowed_ = true;
  } else {
    value_ += count * unit;
  }
  return *this;
}

Status SidecarReader::Open(const std::string& path, const Framing& framing, SidecarReader* out) {
  SidecarReader r;
  r.path_ = path;
  r.framing_ = framing;
  CHITTA_RETURN_IF_ERROR(file::MappedFile::Open(path, &r.map_));
  const std::string kind = framing.kind;
  const uint64_t size = r.size();
  const uint64_t fixed = framing.header_bytes;
  if (size < 8) return r.Corrupt("file too short (" + std::to_string(size) + " bytes)", 0);
  if (std::memcmp(r.data(), framing.magic, 8) != 0) {
    return r.Corrupt("bad magic (not a " + kind + ")", 0);
  }
  if (size < 10) return r.Corrupt("file too short (" + std::to_string(size) + " bytes)", 0);
  const uint16_t major = coding::GetLE<uint16_t>(r.data() + 8);
  if (major != framing.major) {
    const uint16_t minor = size >= 12 ? coding::GetLE<uint16_t>(r.data() + 10) : 0;
    return Status::Unsupported(kind + " " + path + " has major version " +
                               std::to_string(major) + "." + std::to_string(minor) +
                               "; this reader knows " +
                               std::to_string(framing.major) + ".x (upgrade chitta to read it)")
        .At(path, 8);
  }
  if (size < fixed + kTrailerBytes) {
    return r.Corrupt("file too short (" + std::to_string(size) +
                         " bytes; the header and trailer need " +
                         std::to_string(fixed + kTrailerBytes) + ")",
                     0);
  }
  r.header_bytes_ = framing.header_bytes;
  if (framing.header_size_field) {
    const uint32_t field = r.Get<uint32_t>(12);
    const uint64_t cap = framing.max_header_bytes != 0 ? framing.max_header_bytes : UINT64_MAX;
    if (field < fixed || field > cap || field > size - kTrailerBytes) {
      return r.Corrupt("header size " + std::to_string(field) + " out of range (file is " +
                           std::to_string(size) + " bytes)",
                       12);
    }
    r.header_bytes_ = field;
  }
  *out = std::move(r);
  return Status::OK();
}

Status SidecarReader::Corrupt(const std::string& why, int64_t offset) const {
  return Status::Corruption(std::string(framing_.kind) + " " + path_ + ": " + why)
      .At(path_, offset);
}

Status SidecarReader::CheckCrc() const {
  const uint64_t at = size() - kTrailerBytes;
  const uint32_t stored = coding::GetLE<uint32_t>(data() + at);
  const uint64_t from = framing_.crc_from < at ? framing_.crc_from : at;
  if (crc32c::Value(data() + from, static_cast<size_t>(at - from)) != stored) {
    return Status::CrcMismatch(std::string(framing_.kind) + " " + path_ +
                               ": CRC-32C mismatch (file damaged; restore it or rebuild the index)")
        .At(path_, static_cast<int64_t>(at));
  }
  return Status::OK();
}

Status SidecarReader::CheckRecords(uint64_t count, uint64_t record_bytes,
                                   int64_t count_offset) const {
  const uint64_t body = body_bytes();
  const bool more = record_bytes != 0 && (count > body / record_bytes || count * record_bytes > body);
  if (record_bytes == 0 || more || count * record_bytes != body) {
    return Corrupt("record count " + std::to_string(count) + " (of " +
                       std::to_string(record_bytes) + " bytes each) does not match the file size " +
                       std::to_string(size()) + (more ? " (truncated?)" : ""),
                   count_offset);
  }
  return Status::OK();
}

Status SidecarReader::CheckSize(const SizeSum& expect, int64_t offset) const {
  if (expect.overflowed() || expect.value() != size()) {
    const bool shorter = expect.overflowed() || size() < expect.value();
    return Corrupt("file is " + std::to_string(size()) + " bytes, its header says " +
                       (expect.overflowed() ? std::string("more than 2^64")
                                            : std::to_string(expect.value())) +
                       (shorter ? " (truncated)" : "") + ": the file size does not match",
                   offset);
  }
  return Status::OK();
}

const uint8_t* Cursor::Take(uint64_t count, uint64_t unit) {
  if (unit != 0 && count > (end_ - at_) / unit) return nullptr;
  const uint8_t* p = data_ + at_;
  at_ += count * unit;
  return p;
}

}  // namespace chitta::sidecar
