// csrc/util/sidecar_file.h
// The one reader of the framing every index sidecar shares (bm25.idx, the
// posting index, .hnsw and the word graph's vocab.hnsw, the Hamming code file):
// an 8-byte magic at 0, a u16 major version at 8, optionally a u32 header size
// at 12, a fixed header, a body, and a u32 CRC-32C trailer over [crc_from,
// size - 4). Each format's own FORMAT.md stays normative; this file only reads
// what they have in common, so the bytes on disk are the formats' as before.
//
// Open maps the file and checks, in order: at least 8 bytes, the magic, the
// major version (Unsupported), at least header + trailer bytes, the header
// size field's range. The caller then checks its counts against the size
// (CheckRecords / CheckSize, overflow-free) and the CRC (CheckCrc) in the
// order its format's errors are specified, and walks the body with a Cursor.
// Every error message names the file kind and path (and carries the offset).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "chitta/status.h"
#include "util/file.h"

namespace chitta::sidecar {

struct Framing {
  const char* kind = "";          // starts every message: "bm25 index file"
  const char* magic = "";         // the 8 bytes at offset 0
  uint16_t major = 1;             // u16 at offset 8; any other value is Unsupported
  uint32_t header_bytes = 16;     // this version's fixed header size (>= 16 with a size field)
  bool header_size_field = false; // u32 at 12 gives the header size (later minors may grow it)
  uint32_t max_header_bytes = 0;  // bound on that field; 0: up to the trailer
  uint64_t crc_from = 0;          // the trailer's CRC-32C covers [crc_from, size - 4)
};

inline constexpr uint64_t kTrailerBytes = 4;

// A file size from header counts: header + sum of count * unit, saturating to
// "overflowed" past 2^64 so a forged count cannot wrap around to a match.
class SizeSum {
 public:
  explicit SizeSum(uint64_t start) : value_(start) {}
  SizeSum& Add(uint64_t count, uint64_t unit);
  bool overflowed() const { return overflowed_; }
  uint64_t value() const { return value_; }

 private:
  uint64_t value_;
  bool overflowed_ = false;
};

class SidecarReader {
 public:
  [[nodiscard]] static Status Open(const std::string& path, const Framing& framing,
                                   SidecarReader* out);

  const uint8_t* data() const { return map_.data(); }
  uint64_t size() const { return map_.size(); }
  const std::string& path() const { return path_; }
  uint32_t header_bytes() const { return header_bytes_; }  // the field's value, or the fixed size
  uint64_t body_bytes() const { return size() - header_bytes_ - kTrailerBytes; }
  uint16_t minor() const { return Get<uint16_t>(10); }

  // A little-endian header field; `offset + sizeof(T)` must lie within the
  // fixed header (a programming error otherwise: returns 0).
  template <typename T>
  T Get(uint64_t offset) const {
    T v{};
    if (offset + sizeof(T) <= framing_.header_bytes) std::memcpy(&v, data() + offset, sizeof(T));
    return v;
  }

  // Corruption "<kind> <path>: why" at this file and offset.
  Status Corrupt(const std::string& why, int64_t offset) const;
  // CrcMismatch unless the trailer equals the CRC-32C of [crc_from, size - 4).
  [[nodiscard]] Status CheckCrc() const;
  // Corruption unless the body is exactly `count` records of `record_bytes`
  // (record_bytes > 0); `count_offset` is where the header holds the count.
  [[nodiscard]] Status CheckRecords(uint64_t count, uint64_t record_bytes,
                                    int64_t count_offset) const;
  // Corruption unless the file is exactly `expect` bytes (and it did not overflow).
  [[nodiscard]] Status CheckSize(const SizeSum& expect, int64_t offset) const;

 private:
  file::MappedFile map_;
  std::string path_;
  Framing framing_;
  uint32_t header_bytes_ = 0;
};

// Walks [from, size - 4) of a reader's file: each Take is bounds-checked.
class Cursor {
 public:
  Cursor(const SidecarReader& r, uint64_t from)
      : data_(r.data()), end_(r.size() - kTrailerBytes) {
    at_ = from < end_ ? from : end_;
  }
  // The next `count * unit` bytes, or nullptr (nothing consumed) if fewer are
  // left or the product overflows.
  const uint8_t* Take(uint64_t count, uint64_t unit = 1);
  uint64_t offset() const { return at_; }
  uint64_t left() const { return end_ - at_; }

 private:
  const uint8_t* data_;
  uint64_t end_;
  uint64_t at_ = 0;
};

}  // namespace chitta::sidecar
