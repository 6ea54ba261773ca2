// csrc/util/file.h
// Small POSIX file helpers shared by the log and the sidecars. All return
// Status with the path and errno text on failure; none throws.
#pragma once

#include <sys/types.h>
#include <cstdint>
#include <string>
#include <vector>

#include "chitta/status.h"

namespace chitta::file {

// Read-only memory map of a whole file (empty files map to nothing).
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  static Status Open(const std::string& path, MappedFile* out);
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  // Tells the kernel [offset, end) is about to be read: read-ahead, and the
  // pages mapped in one go rather than faulted one by one. A hint: errors are
  // ignored.
  void Prefetch(uint64_t offset) const;

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

Status WriteAll(int fd, const uint8_t* data, size_t n, const std::string& path);
Status SyncDir(const std::string& dir);
Status ListDir(const std::string& dir, std::vector<std::string>* names);
Status FileSize(const std::string& path, uint64_t* size);
bool Exists(const std::string& path);
bool IsDir(const std::string& path);
// Modes of everything chitta creates in a field (FORMAT.md, section 1): 0600
// files and 0700 directories, or with CHITTA_SHARED_GROUP=1 in the
// environment 0660 and 02770 (the group shares the field). Set exactly, not
// through the umask.
bool SharedGroup();
mode_t FileMode();
mode_t DirMode();
// Creates path and its missing parents with DirMode().
Status MakeDirs(const std::string& path);
Status Truncate(const std::string& path, uint64_t size);
// Write to path.tmp.<pid>, optionally fsync, rename over path, optionally fsync dir.
Status AtomicWrite(const std::string& path, const std::string& bytes, bool sync);
Status ReadSmallFile(const std::string& path, std::string* out, size_t max_bytes);
std::string ErrnoText(int err);

}  // namespace chitta::file
