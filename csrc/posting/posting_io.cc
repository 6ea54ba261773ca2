// csrc/posting/posting_io.cc
// Save/Load of the posting index. Spec: FORMAT.md (v1.0); constants in
// posting_format.h. The framing (magic, version, header size, CRC) is read
// through util/sidecar_file.h. Readers never trust sizes from disk: the file
// size must match the header exactly before anything is allocated.
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "posting/posting_format.h"
#include "posting/posting_index.h"
#include "util/crc32c.h"
#include "util/coding.h"
#include "util/crc_file.h"
#include "util/file.h"
#include "util/sidecar_file.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "posting_io.cc writes arrays with memcpy: little-endian hosts only");

namespace chitta::posting {
namespace {

using File = file::StdioFile;
using file::CrcWriter;
using file::ErrnoText;
using coding::GetLE;
using coding::PutLE;

constexpr uint32_t kFillBlock = 2048;  // posting lists filled per pass of the load

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
  std::vector<uint32_t> row(a);
  for (size_t o = 0; ok && o < ids_.size(); ++o) {
    if (!live_[o]) continue;
    features_.Read(o, row.data());
    ok = w.Write(&ids_[o], sizeof(uint64_t)) &&
         w.Write(row.data(), a * sizeof(uint32_t)) &&
         (!with_acts || w.Write(activations_.data() + o * a, a * sizeof(float)));
  }
  return file::FinishCrcFile(std::move(f), w, ok, tmp, path);
}

Result<std::unique_ptr<PostingIndex>> PostingIndex::Load(const std::string& path) {
  // One read-only map of the whole file; the rows are checked in place and
  // copied once into their final arrays (no per-posting re-add through Add).
  sidecar::Framing framing;
  framing.kind = "posting index file";
  framing.magic = format::kMagic;
  framing.major = format::kMajor;
  framing.header_bytes = format::kHeaderBytes;
  framing.header_size_field = true;
  sidecar::SidecarReader file;
  CHITTA_RETURN_IF_ERROR(sidecar::SidecarReader::Open(path, framing, &file));
  const uint32_t header_bytes = file.header_bytes();
  auto corrupt = [&](const std::string& why, int64_t offset) { return file.Corrupt(why, offset); };
  Options options;
  options.n_features = file.Get<uint32_t>(format::kOffNFeatures);
  options.active = file.Get<uint32_t>(format::kOffActive);
  const uint32_t flags = file.Get<uint32_t>(format::kOffFlags);
  const uint64_t count = file.Get<uint64_t>(format::kOffCount);
  if ((flags & ~format::kKnownFlags) != 0) {
    return Status::Unsupported("posting index file has unknown flag bits").At(path, format::kOffFlags);
  }
  if (!ValidateOptions(options).ok()) {
    return corrupt("n_features/active out of range", format::kOffNFeatures);
  }
  const bool with_acts = (flags & format::kFlagActivations) != 0;
  const size_t a = options.active;
  const uint64_t record_bytes = 8 + uint64_t{a} * 4 * (with_acts ? 2 : 1);
  CHITTA_RETURN_IF_ERROR(file.CheckRecords(count, record_bytes, format::kOffCount));
  if (count > kMaxOrdinals) {
    return corrupt("record count " + std::to_string(count) + " is over the index's limit",
                   format::kOffCount);
  }
  // The CRC first: a damaged file reports CrcMismatch before any record error.
  CHITTA_RETURN_IF_ERROR(file.CheckCrc());

  auto created = Create(options);
  if (!created.ok()) return created.status();
  std::unique_ptr<PostingIndex> index = std::move(created.value());
  PostingIndex& ix = *index;
  const size_t n = static_cast<size_t>(count);
  const uint8_t* records = file.data() + header_bytes;
  auto record_at = [&](size_t i) {
    return static_cast<int64_t>(header_bytes + uint64_t{i} * record_bytes);
  };
  // Pass 1: check every record, fill ids, rows and the per-feature counts.
  ix.ids_.resize(n);
  ix.features_.ResizeRows(n);
  std::vector<uint32_t> row(a);
  std::vector<float> acts(a);
  std::vector<uint32_t> list_size(options.n_features, 0);
  bool all_unit = true;
  ix.id_to_ordinal_.Reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* rec = records + i * record_bytes;
    const uint64_t id = GetLE<uint64_t>(rec);
    if (id == kPadId || !ix.id_to_ordinal_.Insert(id, static_cast<uint32_t>(i))) {
      return corrupt("record " + std::to_string(i) + " has id " + std::to_string(id) +
                         (id == kPadId ? ", the padding id" : ", which an earlier record has"),
                     record_at(i));
    }
    ix.ids_[i] = id;
    std::memcpy(row.data(), rec + 8, a * 4);
    // Branch-free checks (vectorised); the error names the record.
    bool ok = row[a - 1] < options.n_features;
    for (size_t j = 1; j < a; ++j) ok &= row[j] > row[j - 1];
    if (!ok) {
      return corrupt("feature row of record " + std::to_string(i) +
                         " is not strictly ascending below n_features",
                     record_at(i));
    }
    for (size_t j = 0; j < a; ++j) ++list_size[row[j]];
    ix.features_.SetRow(i, row.data());
    if (with_acts) {
      std::memcpy(acts.data(), rec + 8 + a * 4, a * 4);
      bool finite = true, unit = true;
      for (size_t j = 0; j < a; ++j) {
        finite &= std::fabs(acts[j]) <= std::numeric_limits<float>::max();  // false for NaN and inf
        unit &= acts[j] == 1.0f;
      }
      if (!finite) {
        return corrupt("activation of record " + std::to_string(i) + " is not finite", record_at(i));
      }
      all_unit = all_unit && unit;
    }
  }
  // Activations only when some differ from 1.0 (as Add keeps them).
  if (with_acts && !all_unit) {
    ix.activations_.resize(n * a);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(ix.activations_.data() + i * a, records + i * record_bytes + 8 + a * 4, a * 4);
    }
  }
  // Pass 2: posting lists at their exact sizes, ordinals ascending. Filled one
  // block of kFillBlock features at a time, so the lists being appended to stay
  // in cache (one pass over all 2^14 lists at once misses on nearly every
  // append at a million memories); each row keeps a cursor into its sorted ids.
  for (uint32_t f = 0; f < options.n_features; ++f) ix.postings_[f].reserve(list_size[f]);
  std::vector<uint8_t> cursor(n, 0);  // active <= 255
  for (uint32_t lo = 0; lo < options.n_features; lo += kFillBlock) {
    const uint32_t hi = lo + std::min<uint32_t>(kFillBlock, options.n_features - lo);
    for (size_t i = 0; i < n; ++i) {
      ix.features_.With(i, [&](const auto* row_i) {  // the compact rows, checked in pass 1
        size_t j = cursor[i];
        for (; j < a && row_i[j] < hi; ++j) ix.postings_[row_i[j]].push_back(static_cast<uint32_t>(i));
        cursor[i] = static_cast<uint8_t>(j);
        return 0;
      });
    }
  }
  ix.live_.assign(n, 1);
  return index;
}

}  // namespace chitta::posting
