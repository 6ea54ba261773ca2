// csrc/hamming/store_file.cc
// Save / Load of a HammingIndex. Spec: FORMAT.md (v1.0). Load reads the framing
// through util/sidecar_file.h. Little-endian hosts only (x86-64, aarch64):
// integers are copied as they lie in memory.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include <unistd.h>

#include "hamming/hamming_index.h"
#include "hamming/store_format.h"
#include "util/crc32c.h"
#include "util/sidecar_file.h"

namespace chitta::hamming {
namespace {

template <typename T>
void Put(std::vector<uint8_t>* buf, size_t offset, T value) {
  std::memcpy(buf->data() + offset, &value, sizeof(T));
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
  sidecar::Framing framing;
  framing.kind = "Hamming code file";
  framing.magic = format::kMagic;
  framing.major = format::kMajor;
  framing.header_bytes = format::kHeaderSize;
  sidecar::SidecarReader file;
  CHITTA_RETURN_IF_ERROR(sidecar::SidecarReader::Open(path, framing, &file));
  const uint32_t words = file.Get<uint32_t>(format::kWordsOffset);
  if (words == 0 || words > format::kMaxWords) {
    return file.Corrupt("code width " + std::to_string(words) + " words is out of range",
                        format::kWordsOffset);
  }
  const uint64_t count = file.Get<uint64_t>(format::kCountOffset);
  const size_t record = format::RecordSize(words);
  CHITTA_RETURN_IF_ERROR(file.CheckRecords(count, record, format::kCountOffset));
  CHITTA_RETURN_IF_ERROR(file.CheckCrc());
  std::vector<uint64_t> ids(count);
  std::vector<uint64_t> codes(count * words);
  sidecar::Cursor at(file, format::kHeaderSize);
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* rec = at.Take(record);
    if (rec == nullptr) return file.Corrupt("record " + std::to_string(i) + " is cut off", 0);
    std::memcpy(&ids[i], rec, 8);
    std::memcpy(codes.data() + i * words, rec + 8, 8 * static_cast<size_t>(words));
  }
  std::unique_ptr<HammingIndex> index(new HammingIndex(words));
  Status st = index->store_.CheckAdd(ids.data(), ids.size());
  if (!st.ok()) return file.Corrupt("bad record: " + st.message(), format::kHeaderSize);
  index->store_.Reserve(count);
  index->store_.Append(ids.data(), codes.data(), nullptr, count);
  return index;
}

}  // namespace chitta::hamming
