// csrc/hamming/store_file.cc
// Save / Load of a HammingIndex. Spec: FORMAT.md (v1.0). Little-endian hosts
// only (x86-64, aarch64): integers are copied as they lie in memory.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include <unistd.h>

#include "hamming/hamming_index.h"
#include "hamming/store_format.h"
#include "util/crc32c.h"

namespace chitta::hamming {
namespace {

template <typename T>
void Put(std::vector<uint8_t>* buf, size_t offset, T value) {
  std::memcpy(buf->data() + offset, &value, sizeof(T));
}

template <typename T>
T Get(const std::vector<uint8_t>& buf, size_t offset) {
  T value;
  std::memcpy(&value, buf.data() + offset, sizeof(T));
  return value;
}

Status IoError(const std::string& what, const std::string& path) {
  return Status::IOError(what + ": " + std::strerror(errno)).At(path, -1);
}

Status WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return IoError("cannot create " + tmp, tmp);
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() &&
                       std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  Status st = written ? Status::OK() : IoError("cannot write " + tmp, tmp);
  if (std::fclose(f) != 0 && st.ok()) st = IoError("cannot close " + tmp, tmp);
  if (st.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    st = IoError("cannot rename " + tmp + " to " + path, path);
  }
  if (!st.ok()) std::remove(tmp.c_str());
  return st;
}

Status ReadFile(const std::string& path, std::vector<uint8_t>* bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return IoError("cannot open " + path, path);
  Status st;
  if (std::fseek(f, 0, SEEK_END) != 0) st = IoError("cannot seek " + path, path);
  long size = st.ok() ? std::ftell(f) : -1;
  if (st.ok() && size < 0) st = IoError("cannot size " + path, path);
  if (st.ok() && std::fseek(f, 0, SEEK_SET) != 0) st = IoError("cannot seek " + path, path);
  if (st.ok()) {
    bytes->resize(static_cast<size_t>(size));
    if (std::fread(bytes->data(), 1, bytes->size(), f) != bytes->size()) {
      st = IoError("cannot read " + path, path);
    }
  }
  std::fclose(f);
  return st;
}

Status Damaged(const std::string& what, const std::string& path, int64_t offset) {
  return Status::Corruption(what).At(path, offset);
}

}  // namespace

Status HammingIndex::Save(const std::string& path) const {
  std::vector<uint8_t> bytes;
  {
    std::shared_lock lock(mu_);
    const uint32_t words = static_cast<uint32_t>(store_.words());
    const size_t record = format::RecordSize(words);
    const uint64_t count = store_.live();
    bytes.assign(format::kHeaderSize + count * record + format::kFooterSize, 0);
    std::memcpy(bytes.data() + format::kMagicOffset, format::kMagic, sizeof(format::kMagic));
    Put<uint16_t>(&bytes, format::kMajorOffset, format::kMajor);
    Put<uint16_t>(&bytes, format::kMinorOffset, format::kMinor);
    Put<uint32_t>(&bytes, format::kWordsOffset, words);
    Put<uint64_t>(&bytes, format::kCountOffset, count);
    size_t at = format::kHeaderSize;
    for (size_t s = 0; s < store_.slots(); ++s) {
      if (store_.dead_at(s)) continue;
      Put<uint64_t>(&bytes, at, store_.id_at(s));
      std::memcpy(bytes.data() + at + 8, store_.code_at(s), 8 * static_cast<size_t>(words));
      at += record;
    }
  }
  const size_t body = bytes.size() - format::kFooterSize;
  Put<uint32_t>(&bytes, body, crc32c::Value(bytes.data(), body));
  return WriteFile(path, bytes);
}

Result<std::unique_ptr<HammingIndex>> HammingIndex::Load(const std::string& path) {
  std::vector<uint8_t> bytes;
  Status st = ReadFile(path, &bytes);
  if (!st.ok()) return st;
  if (bytes.size() < format::kHeaderSize + format::kFooterSize) {
    return Damaged("file too short for a Hamming code file header", path, 0);
  }
  if (std::memcmp(bytes.data(), format::kMagic, sizeof(format::kMagic)) != 0) {
    return Damaged("bad magic: not a chitta Hamming code file", path, 0);
  }
  const uint16_t major = Get<uint16_t>(bytes, format::kMajorOffset);
  if (major != format::kMajor) {
    return Status::Unsupported("Hamming code file major version " + std::to_string(major) +
                               " (this reader knows " + std::to_string(format::kMajor) + ")")
        .At(path, format::kMajorOffset);
  }
  const uint32_t words = Get<uint32_t>(bytes, format::kWordsOffset);
  if (words == 0 || words > format::kMaxWords) {
    return Damaged("code width " + std::to_string(words) + " words is out of range", path,
                   format::kWordsOffset);
  }
  const uint64_t count = Get<uint64_t>(bytes, format::kCountOffset);
  const size_t record = format::RecordSize(words);
  const size_t room = bytes.size() - format::kHeaderSize - format::kFooterSize;
  if (count > room / record || count * record != room) {
    return Damaged("record count " + std::to_string(count) + " does not match the file size " +
                       std::to_string(bytes.size()),
                   path, format::kCountOffset);
  }
  const size_t body = bytes.size() - format::kFooterSize;
  const uint32_t stored = Get<uint32_t>(bytes, body);
  const uint32_t actual = crc32c::Value(bytes.data(), body);
  if (stored != actual) {
    return Status::CrcMismatch("Hamming code file checksum mismatch").At(path,
                                                                        static_cast<int64_t>(body));
  }
  std::vector<uint64_t> ids(count);
  std::vector<uint64_t> codes(count * words);
  for (uint64_t i = 0; i < count; ++i) {
    const size_t at = format::kHeaderSize + i * record;
    ids[i] = Get<uint64_t>(bytes, at);
    std::memcpy(codes.data() + i * words, bytes.data() + at + 8, 8 * static_cast<size_t>(words));
  }
  std::unique_ptr<HammingIndex> index(new HammingIndex(words));
  st = index->store_.CheckAdd(ids.data(), ids.size());
  if (!st.ok()) return Damaged("bad record: " + st.message(), path, format::kHeaderSize);
  index->store_.Reserve(count);
  index->store_.Append(ids.data(), codes.data(), nullptr, count);
  return index;
}

}  // namespace chitta::hamming
