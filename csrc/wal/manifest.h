// csrc/wal/manifest.h
// <root>/MANIFEST: a cache of the highest seqno per instance, so a writer can
// start its Lamport clock without scanning every segment. Never the truth: an
// entry is trusted only while its instance's last segment still has the
// recorded name and size; otherwise that segment is rescanned. Rewritten
// atomically (tmp + rename). Byte layout in docs/FORMAT.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chitta/status.h"

namespace chitta::wal {

struct ManifestEntry {
  uint32_t instance_id = 0;
  uint64_t max_seqno = 0;
  uint64_t last_first_seqno = 0;  // first seqno (file name) of the last segment
  uint64_t last_size = 0;         // its size in bytes when max_seqno was taken
};

constexpr uint8_t kManifestMagic[8] = {'C', 'H', 'I', 'T', 'T', 'A', 'M', 'F'};
constexpr size_t kManifestEntrySize = 32;
constexpr uint32_t kManifestMaxEntries = 1u << 24;

std::string EncodeManifest(const std::vector<ManifestEntry>& entries);
Status DecodeManifest(const std::string& bytes, std::vector<ManifestEntry>* entries);

}  // namespace chitta::wal
