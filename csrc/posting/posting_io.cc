// csrc/posting/posting_io.cc
// Save/Load of the posting index. Spec: FORMAT.md (v1.0); constants in
// posting_format.h. Readers never trust sizes from disk: the file size must
// match the header exactly before anything is allocated.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "posting/posting_format.h"
#include "posting/posting_index.h"
#include "util/crc32c.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "posting_io.cc writes arrays with memcpy: little-endian hosts only");

namespace chitta::posting {
namespace {

constexpr size_t kChunkRecords = 8192;

template <typename T>
void PutLE(uint8_t* dst, T v) {
  std::memcpy(dst, &v, sizeof(T));
}
template <typename T>
T GetLE(const uint8_t* src) {
  T v;
  std::memcpy(&v, src, sizeof(T));
  return v;
}

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Writes bytes and folds them into a running CRC-32C.
class CrcWriter {
 public:
  explicit CrcWriter(std::FILE* f) : f_(f) {}
  bool Write(const void* data, size_t n) {
    crc_ = crc32c::Extend(crc_, data, n);
    return std::fwrite(data, 1, n, f_) == n;
  }
  uint32_t crc() const { return crc_; }

 private:
  std::FILE* f_;
  uint32_t crc_ = 0;
};

}  // namespace

Status PostingIndex::Save(const std::string& path) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const size_t a = options_.active;
  const bool with_acts = !activations_.empty();
  const std::string tmp = path + ".tmp";
  File f(std::fopen(tmp.c_str(), "wb"));
  if (!f) return Status::IOError(ErrnoText("cannot create", tmp));

  uint8_t header[format::kHeaderBytes] = {0};
  std::memcpy(header + format::kOffMagic, format::kMagic, sizeof(format::kMagic));
  PutLE<uint16_t>(header + format::kOffMajor, format::kMajor);
  PutLE<uint16_t>(header + format::kOffMinor, format::kMinor);
  PutLE<uint32_t>(header + format::kOffHeaderBytes, format::kHeaderBytes);
  PutLE<uint32_t>(header + format::kOffNFeatures, options_.n_features);
  PutLE<uint32_t>(header + format::kOffActive, options_.active);
  PutLE<uint32_t>(header + format::kOffFlags, with_acts ? format::kFlagActivations : 0u);
  PutLE<uint32_t>(header + format::kOffReserved, 0u);
  PutLE<uint64_t>(header + format::kOffCount, uint64_t{ids_.size() - num_dead_});

  CrcWriter w(f.get());
  bool ok = w.Write(header, sizeof(header));
  for (size_t o = 0; ok && o < ids_.size(); ++o) {
    if (!live_[o]) continue;
    ok = w.Write(&ids_[o], sizeof(uint64_t)) &&
         w.Write(features_.data() + o * a, a * sizeof(uint32_t)) &&
         (!with_acts || w.Write(activations_.data() + o * a, a * sizeof(float)));
  }
  uint8_t trailer[format::kTrailerBytes];
  PutLE<uint32_t>(trailer, w.crc());
  ok = ok && std::fwrite(trailer, 1, sizeof(trailer), f.get()) == sizeof(trailer);
  ok = ok && std::fflush(f.get()) == 0 && ::fsync(fileno(f.get())) == 0;
  if (!ok) {
    Status st = Status::IOError(ErrnoText("cannot write", tmp));
    f.reset();
    std::remove(tmp.c_str());
    return st;
  }
  if (std::fclose(f.release()) != 0) {
    Status st = Status::IOError(ErrnoText("cannot close", tmp));
    std::remove(tmp.c_str());
    return st;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    Status st = Status::IOError(ErrnoText("cannot rename onto", path));
    std::remove(tmp.c_str());
    return st;
  }
  return Status::OK();
}

Result<std::unique_ptr<PostingIndex>> PostingIndex::Load(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return Status::IOError(ErrnoText("cannot open", path));
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return Status::IOError(ErrnoText("cannot seek", path));
  const long end = std::ftell(f.get());
  if (end < 0) return Status::IOError(ErrnoText("cannot tell size of", path));
  std::rewind(f.get());
  const uint64_t file_size = static_cast<uint64_t>(end);
  auto corrupt = [&](const std::string& why, int64_t offset) {
    return Status::Corruption("posting index file: " + why).At(path, offset);
  };

  if (file_size < format::kHeaderBytes + format::kTrailerBytes) {
    return corrupt("file too short (" + std::to_string(file_size) + " bytes)", 0);
  }
  uint8_t header[format::kHeaderBytes];
  if (std::fread(header, 1, sizeof(header), f.get()) != sizeof(header)) {
    return Status::IOError(ErrnoText("cannot read", path));
  }
  if (std::memcmp(header + format::kOffMagic, format::kMagic, sizeof(format::kMagic)) != 0) {
    return corrupt("bad magic (not a posting index file)", format::kOffMagic);
  }
  const uint16_t major = GetLE<uint16_t>(header + format::kOffMajor);
  if (major != format::kMajor) {
    return Status::Unsupported("posting index file has major version " + std::to_string(major) +
                               "; this reader knows " + std::to_string(format::kMajor))
        .At(path, format::kOffMajor);
  }
  const uint32_t header_bytes = GetLE<uint32_t>(header + format::kOffHeaderBytes);
  Options options;
  options.n_features = GetLE<uint32_t>(header + format::kOffNFeatures);
  options.active = GetLE<uint32_t>(header + format::kOffActive);
  const uint32_t flags = GetLE<uint32_t>(header + format::kOffFlags);
  const uint64_t count = GetLE<uint64_t>(header + format::kOffCount);
  if (header_bytes < format::kHeaderBytes || header_bytes > file_size) {
    return corrupt("header_bytes out of range", format::kOffHeaderBytes);
  }
  if ((flags & ~format::kKnownFlags) != 0) {
    return Status::Unsupported("posting index file has unknown flag bits").At(path, format::kOffFlags);
  }
  if (!ValidateOptions(options).ok()) {
    return corrupt("n_features/active out of range", format::kOffNFeatures);
  }
  const bool with_acts = (flags & format::kFlagActivations) != 0;
  const size_t a = options.active;
  const uint64_t record_bytes = 8 + uint64_t{a} * 4 * (with_acts ? 2 : 1);
  const uint64_t body = file_size - header_bytes - format::kTrailerBytes;
  if (file_size < uint64_t{header_bytes} + format::kTrailerBytes || count > body / record_bytes ||
      count * record_bytes != body || count > kMaxOrdinals) {
    return corrupt("file size " + std::to_string(file_size) + " does not match count " +
                       std::to_string(count),
                   format::kOffCount);
  }

  uint32_t crc = crc32c::Extend(0, header, sizeof(header));
  // Header bytes beyond the ones this version knows (a later minor version).
  std::vector<uint8_t> extra(header_bytes - format::kHeaderBytes);
  if (!extra.empty()) {
    if (std::fread(extra.data(), 1, extra.size(), f.get()) != extra.size()) {
      return Status::IOError(ErrnoText("cannot read", path));
    }
    crc = crc32c::Extend(crc, extra.data(), extra.size());
  }

  auto created = Create(options);
  if (!created.ok()) return created.status();
  std::unique_ptr<PostingIndex> index = std::move(created.value());

  Status record_error;  // first record-level problem; CRC mismatch wins over it
  std::vector<uint8_t> buf;
  std::vector<uint64_t> ids;
  std::vector<uint32_t> feats;
  std::vector<float> acts;
  for (uint64_t first = 0; first < count; first += kChunkRecords) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkRecords, count - first));
    buf.resize(n * record_bytes);
    if (std::fread(buf.data(), 1, buf.size(), f.get()) != buf.size()) {
      return Status::IOError(ErrnoText("cannot read", path));
    }
    crc = crc32c::Extend(crc, buf.data(), buf.size());
    if (!record_error.ok()) continue;
    ids.resize(n);
    feats.resize(n * a);
    acts.resize(with_acts ? n * a : 0);
    for (size_t i = 0; i < n && record_error.ok(); ++i) {
      const uint8_t* rec = buf.data() + i * record_bytes;
      ids[i] = GetLE<uint64_t>(rec);
      std::memcpy(feats.data() + i * a, rec + 8, a * 4);
      if (with_acts) std::memcpy(acts.data() + i * a, rec + 8 + a * 4, a * 4);
      for (size_t j = 1; j < a; ++j) {
        if (feats[i * a + j] <= feats[i * a + j - 1]) {
          record_error = corrupt("feature row of record " + std::to_string(first + i) +
                                     " is not strictly ascending",
                                 static_cast<int64_t>(header_bytes + (first + i) * record_bytes));
          break;
        }
      }
    }
    if (!record_error.ok()) continue;
    Status st = index->Add(ids.data(), n, feats.data(), with_acts ? acts.data() : nullptr);
    if (!st.ok()) {
      record_error = corrupt("invalid records " + std::to_string(first) + ".." +
                                 std::to_string(first + n - 1) + ": " + st.message(),
                             static_cast<int64_t>(header_bytes + first * record_bytes));
    }
  }
  uint8_t trailer[format::kTrailerBytes];
  if (std::fread(trailer, 1, sizeof(trailer), f.get()) != sizeof(trailer)) {
    return Status::IOError(ErrnoText("cannot read", path));
  }
  if (GetLE<uint32_t>(trailer) != crc) {
    return Status::CrcMismatch("posting index file: CRC-32C mismatch")
        .At(path, static_cast<int64_t>(file_size - format::kTrailerBytes));
  }
  if (!record_error.ok()) return record_error;
  return index;
}

}  // namespace chitta::posting
