// csrc/wal/quarantine.cc
#include "wal/quarantine.h"

#include <chrono>

#include "util/file.h"

namespace chitta::wal {

Status QuarantineTail(const std::string& root, const std::string& segment, uint64_t offset,
                      uint64_t bytes, const std::string& why) {
  if (bytes == 0) return Status::OK();
  file::MappedFile m;
  CHITTA_RETURN_IF_ERROR(file::MappedFile::Open(root + "/segments/" + segment, &m));
  if (offset > m.size() || bytes > m.size() - offset) {
    return Status::Corruption("quarantine of " + segment + " at offset " + std::to_string(offset) +
                              " runs past its end; the segment changed under its owner");
  }
  const std::string dir = root + "/quarantine";
  CHITTA_RETURN_IF_ERROR(file::MakeDirs(dir));
  const std::string base = dir + "/" + segment + "." + std::to_string(offset);
  const std::string copy(reinterpret_cast<const char*>(m.data()) + offset, bytes);
  Status st = file::AtomicWrite(base + ".bin", copy, true);
  if (!st.ok()) {
    return Status::IOError("cannot keep the unfinished tail of " + segment +
                           " in quarantine (free some space, or open read-only): " + st.message());
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  // Segment names are [0-9a-f_.seg] and `why` a fixed word: nothing to escape.
  const std::string report = "{\"segment\": \"" + segment + "\", \"offset\": " +
                             std::to_string(offset) + ", \"bytes\": " + std::to_string(bytes) +
                             ", \"why\": \"" + why + "\", \"time_ms\": " + std::to_string(ms) +
                             "}\n";
  return file::AtomicWrite(base + ".json", report, true);
}

}  // namespace chitta::wal
