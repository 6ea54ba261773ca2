// csrc/util/crc_file.h
// Writing an index file through a temporary: the bytes go to `<path>.tmp`
// through a CrcWriter (a running CRC-32C), then FinishCrcFile appends the CRC
// as a little-endian u32 trailer, flushes, fsyncs, closes and renames the
// temporary onto `path`. A failure at any step removes the temporary and
// returns an IOError; `path` is then untouched. Used by the posting and BM25
// index files (their FORMAT.md: "trailer: CRC-32C of every byte before it").
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "chitta/status.h"
#include "util/crc32c.h"

namespace chitta::file {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using StdioFile = std::unique_ptr<std::FILE, FileCloser>;

inline std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

class CrcWriter {
 public:
  explicit CrcWriter(std::FILE* f) : f_(f) {}
  template <typename T>
  bool Write(const std::vector<T>& v) {
    return Write(v.data(), v.size() * sizeof(T));
  }
  bool Write(const void* data, size_t n) {
    if (n == 0) return true;
    crc_ = crc32c::Extend(crc_, data, n);
    return std::fwrite(data, 1, n, f_) == n;
  }
  uint32_t crc() const { return crc_; }

 private:
  std::FILE* f_;
  uint32_t crc_ = 0;
};

// `ok`: whether every write so far succeeded.
inline Status FinishCrcFile(StdioFile f, const CrcWriter& w, bool ok, const std::string& tmp,
                            const std::string& path) {
  uint8_t trailer[4];
  const uint32_t crc = w.crc();
  for (int i = 0; i < 4; ++i) trailer[i] = static_cast<uint8_t>(crc >> (8 * i));
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

}  // namespace chitta::file
