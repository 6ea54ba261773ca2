// csrc/capi/capi_test_util.h
// Helpers for the C API tests: a temporary directory, a record collector for
// cf_replay / cf_refresh callbacks, and byte surgery on segment files.
#pragma once

#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "chitta/chitta_field.h"

namespace capi_test {

inline std::string TempDir() {
  char tmpl[] = "/tmp/chitta_capi_XXXXXX";
  char* d = mkdtemp(tmpl);
  return d ? d : "";
}

inline void RemoveTree(const std::string& path) {
  std::string cmd = "rm -rf '" + path + "'";
  if (std::system(cmd.c_str()) != 0) std::perror("rm");
}

struct Rec {
  uint64_t seqno;
  uint32_t instance;
  uint8_t op;
  std::string payload;
};

struct Collector {
  std::vector<Rec> recs;
  size_t stop_after = SIZE_MAX;  // return non-zero once this many were seen
  static int Fn(void* user, uint64_t seqno, uint32_t instance, uint8_t op,
                const uint8_t* payload, size_t len) {
    auto* c = static_cast<Collector*>(user);
    c->recs.push_back({seqno, instance, op, std::string(reinterpret_cast<const char*>(payload), len)});
    return c->recs.size() >= c->stop_after ? 1 : 0;
  }
};

// Names of the segment files of the field at root, sorted.
inline std::vector<std::string> Segments(const std::string& root) {
  std::vector<std::string> out;
  DIR* d = opendir((root + "/segments").c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 4 && n.substr(n.size() - 4) == ".seg") out.push_back(root + "/segments/" + n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

inline void XorByte(const std::string& path, long offset, uint8_t mask) {
  FILE* f = std::fopen(path.c_str(), "r+b");
  if (f == nullptr) return;
  std::fseek(f, offset, SEEK_SET);
  int c = std::fgetc(f);
  std::fseek(f, offset, SEEK_SET);
  std::fputc((c ^ mask) & 0xff, f);
  std::fclose(f);
}

inline void AppendBytes(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "ab");
  if (f == nullptr) return;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

inline cf_status Append(cf_field_t* f, uint8_t op, const std::string& s, uint64_t* seq = nullptr) {
  return cf_append(f, op, reinterpret_cast<const uint8_t*>(s.data()), s.size(), seq);
}

}  // namespace capi_test
