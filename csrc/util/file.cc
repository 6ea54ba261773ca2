// csrc/util/file.cc
#include <cstdlib>
#include "util/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace chitta::file {

std::string ErrnoText(int err) { return std::strerror(err); }

namespace {
Status IoError(const std::string& what, const std::string& path, int err) {
  return Status::IOError(what + " " + path + ": " + ErrnoText(err));
}
}  // namespace

MappedFile::~MappedFile() {
  if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

Status MappedFile::Open(const std::string& path, MappedFile* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("open", path, errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return IoError("stat", path, err);
  }
  MappedFile m;
  m.size_ = static_cast<uint64_t>(st.st_size);
  if (m.size_ > 0) {
    void* p = mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return IoError("mmap", path, err);
    }
    m.data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  *out = std::move(m);
  return Status::OK();
}

void MappedFile::Prefetch(uint64_t offset) const {
  if (data_ == nullptr || offset >= size_) return;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;
  void* at = const_cast<uint8_t*>(data_) + start;
  ::madvise(at, size_ - start, MADV_WILLNEED);
#ifdef MADV_POPULATE_READ
  // Map every page in one call (Linux >= 5.14) instead of one fault per 4 KiB
  // page as the scan and the decoders touch it; older kernels refuse: ignored.
  ::madvise(at, size_ - start, MADV_POPULATE_READ);
#endif
}

Status WriteAll(int fd, const uint8_t* data, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return IoError("write", path, errno);
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return Status::OK();
}

Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("open dir", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return IoError("fsync dir", dir, err);
  return Status::OK();
}

Status ListDir(const std::string& dir, std::vector<std::string>* names) {
  names->clear();
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return IoError("list", dir, errno);
  while (struct dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names->emplace_back(e->d_name);
  }
  closedir(d);
  return Status::OK();
}

Status FileSize(const std::string& path, uint64_t* size) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return IoError("stat", path, errno);
  *size = static_cast<uint64_t>(st.st_size);
  return Status::OK();
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool SharedGroup() {
  const char* v = std::getenv("CHITTA_SHARED_GROUP");
  return v != nullptr && v[0] == '1' && v[1] == '\0';
}

mode_t FileMode() { return SharedGroup() ? 0660 : 0600; }
mode_t DirMode() { return SharedGroup() ? 02770 : 0700; }

Status MakeDirs(const std::string& path) {
  if (path.empty() || IsDir(path)) return Status::OK();
  auto slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) CHITTA_RETURN_IF_ERROR(MakeDirs(path.substr(0, slash)));
  if (::mkdir(path.c_str(), DirMode()) != 0) {
    if (errno == EEXIST) return Status::OK();
    return IoError("mkdir", path, errno);
  }
  (void)::chmod(path.c_str(), DirMode());  // exactly, whatever the umask
  return Status::OK();
}

Status Truncate(const std::string& path, uint64_t size) {
  if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0) return IoError("truncate", path, errno);
  return Status::OK();
}

Status AtomicWrite(const std::string& path, const std::string& bytes, bool sync) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, FileMode());
  if (fd < 0) return IoError("create", tmp, errno);
  (void)::fchmod(fd, FileMode());
  Status st = WriteAll(fd, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), tmp);
  if (st.ok() && sync && ::fsync(fd) != 0) st = IoError("fsync", tmp, errno);
  ::close(fd);
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) st = IoError("rename", tmp, errno);
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  if (sync) {
    auto slash = path.find_last_of('/');
    return SyncDir(slash == std::string::npos ? "." : path.substr(0, slash));
  }
  return Status::OK();
}

Status ReadSmallFile(const std::string& path, std::string* out, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path);
    return IoError("open", path, errno);
  }
  out->clear();
  char buf[4096];
  while (true) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return IoError("read", path, err);
    }
    if (r == 0) break;
    out->append(buf, static_cast<size_t>(r));
    if (out->size() > max_bytes) {
      ::close(fd);
      return Status::Corruption(path + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return Status::OK();
}

}  // namespace chitta::file
