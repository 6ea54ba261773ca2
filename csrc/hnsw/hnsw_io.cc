// csrc/hnsw/hnsw_io.cc
// Save/Load of the .hnsw sidecar (also the word graph's vocab.hnsw). Spec:
// FORMAT.md. The reader (framing through util/sidecar_file.h) trusts nothing:
// it checks sizes against the file before allocating, the CRC before parsing
// the body, and every graph invariant before handing the index out.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "hnsw/hnsw.h"
#include "hnsw/hnsw_format.h"
#include "util/crc32c.h"
#include "util/sidecar_file.h"

namespace chitta::hnsw {
namespace {

namespace fmt = format;

template <typename T>
void Put(std::string* buf, size_t off, T v) {
  std::memcpy(&(*buf)[off], &v, sizeof(T));  // little-endian hosts only
}
template <typename T>
T Get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

class CrcWriter {
 public:
  explicit CrcWriter(std::FILE* f) : f_(f) {}
  void Write(const void* p, size_t n) {
    if (n == 0 || !ok_) return;
    crc_ = crc32c::Extend(crc_, p, n);
    ok_ = std::fwrite(p, 1, n, f_) == n;
  }
  uint32_t crc() const { return crc_; }
  bool ok() const { return ok_; }

 private:
  std::FILE* f_;
  uint32_t crc_ = 0;
  bool ok_ = true;
};

// Which nodes a v2.0 file writes as references to rows (live nodes whose
// stored vector is bit for bit their row, prepared), and the CRC of those.
struct RefPlan {
  std::vector<uint8_t> is_ref;
  uint64_t count = 0;
  uint32_t crc = 0;
};

}  // namespace

RowSource::RowSource(const uint64_t* ids, const int64_t* rows, size_t n, const float* matrix,
                     size_t n_rows, size_t dim)
    : matrix_(matrix), n_rows_(n_rows), dim_(dim) {
  sorted_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (rows[i] >= 0 && static_cast<uint64_t>(rows[i]) < n_rows) sorted_.emplace_back(ids[i], rows[i]);
  }
  std::sort(sorted_.begin(), sorted_.end());
}

const float* RowSource::Find(uint64_t id) const {
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::make_pair(id, int64_t{-1}));
  if (it == sorted_.end() || it->first != id) return nullptr;
  return matrix_ + static_cast<size_t>(it->second) * dim_;
}

Status HnswIndex::Save(const std::string& path, const RowSource* rows) const {
  if (rows != nullptr && rows->dim() != options_.dim) {
    return Status::InvalidArgument("the rows have " + std::to_string(rows->dim()) +
                                   " columns, the graph " + std::to_string(options_.dim));
  }
  RefPlan plan;
  plan.is_ref.assign(count_, 0);
  if (rows != nullptr) {
    std::vector<float> prepared(options_.dim);
    const size_t vec_bytes = options_.dim * sizeof(float);
    for (uint32_t i = 0; i < count_; ++i) {
      if (deleted_[i]) continue;
      const float* row = rows->Find(labels_[i]);
      if (row == nullptr) continue;
      if (!PrepareVector(options_.metric, row, options_.dim, prepared.data()).ok()) continue;
      if (std::memcmp(prepared.data(), VectorOf(i), vec_bytes) != 0) continue;
      plan.is_ref[i] = 1;
      ++plan.count;
      plan.crc = crc32c::Extend(plan.crc, VectorOf(i), vec_bytes);
    }
  }
  const bool refs = rows != nullptr;
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return Status::IOError("cannot create " + tmp + ": " + std::strerror(errno));
  const uint32_t header_size = refs ? fmt::kHeaderSizeRefs : fmt::kHeaderSize;
  std::string header(header_size, '\0');
  std::memcpy(&header[0], fmt::kMagic, 8);
  Put<uint16_t>(&header, fmt::kOffMajor, refs ? fmt::kMajorRefs : fmt::kMajor);
  Put<uint16_t>(&header, fmt::kOffMinor, refs ? fmt::kMinorRefs : fmt::kMinor);
  Put<uint32_t>(&header, fmt::kOffHeaderSize, header_size);
  Put<uint32_t>(&header, fmt::kOffDim, options_.dim);
  Put<uint32_t>(&header, fmt::kOffM, options_.M);
  Put<uint32_t>(&header, fmt::kOffEfConstruction, options_.ef_construction);
  Put<uint8_t>(&header, fmt::kOffMetric, static_cast<uint8_t>(options_.metric));
  Put<uint64_t>(&header, fmt::kOffNodeCount, count_);
  Put<uint64_t>(&header, fmt::kOffLiveCount, size());
  Put<uint32_t>(&header, fmt::kOffEntryPoint, count_ > 0 ? entry_point_ : fmt::kNoEntry);
  Put<int32_t>(&header, fmt::kOffMaxLevel, max_level_);
  Put<uint64_t>(&header, fmt::kOffRngState, rng_state_);
  if (refs) {
    Put<uint64_t>(&header, fmt::kOffRefCount, plan.count);
    Put<uint32_t>(&header, fmt::kOffRefCrc, plan.crc);
  }

  bool ok = std::fwrite(header.data(), 1, 8, f) == 8;
  CrcWriter w(f);
  w.Write(header.data() + 8, header.size() - 8);
  w.Write(labels_.data(), count_ * sizeof(uint64_t));
  w.Write(levels_.data(), count_);
  std::vector<uint8_t> flags(count_);
  for (size_t i = 0; i < count_; ++i) {
    flags[i] = static_cast<uint8_t>((deleted_[i] ? fmt::kFlagDeleted : 0) |
                                    (plan.is_ref[i] ? fmt::kFlagRefVector : 0));
  }
  w.Write(flags.data(), count_);
  for (uint32_t i = 0; i < count_; ++i) {
    if (!plan.is_ref[i]) w.Write(VectorOf(i), options_.dim * sizeof(float));
  }
  for (uint32_t i = 0; i < count_; ++i) w.Write(Links0(i), links0_bytes_);
  for (uint32_t i = 0; i < count_; ++i) {
    if (levels_[i] > 0) w.Write(upper_[i].get(), levels_[i] * (M_ + 1) * sizeof(uint32_t));
  }
  const uint32_t crc = w.crc();
  ok = ok && w.ok() && std::fwrite(&crc, 1, 4, f) == 4;
  ok = (std::fflush(f) == 0) && ok;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    return Status::IOError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IOError("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return Status::OK();
}

namespace {

// The u16 major version at offset 8 (1 when the file is too short or unreadable:
// the v1.0 reader then reports the damage).
uint16_t PeekMajor(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return fmt::kMajor;
  unsigned char head[10];
  const bool ok = std::fread(head, 1, sizeof(head), f) == sizeof(head);
  std::fclose(f);
  if (!ok) return fmt::kMajor;
  return static_cast<uint16_t>(head[8] | (head[9] << 8));
}

}  // namespace

Result<std::unique_ptr<HnswIndex>> HnswIndex::Load(const std::string& path,
                                                   const RowSource* rows) {
  const bool refs = PeekMajor(path) == fmt::kMajorRefs;
  sidecar::Framing framing;
  framing.kind = "HNSW file";
  framing.magic = fmt::kMagic;
  framing.major = refs ? fmt::kMajorRefs : fmt::kMajor;
  framing.header_bytes = refs ? fmt::kHeaderSizeRefs : fmt::kHeaderSize;
  framing.header_size_field = true;
  framing.max_header_bytes = 1u << 20;
  framing.crc_from = 8;  // the magic is outside the CRC (FORMAT.md)
  sidecar::SidecarReader file;
  CHITTA_RETURN_IF_ERROR(sidecar::SidecarReader::Open(path, framing, &file));
  const char* p = reinterpret_cast<const char*>(file.data());
  const size_t size = file.size();
  auto corrupt = [&](const std::string& what, size_t off) -> Status {
    return file.Corrupt(what, static_cast<int64_t>(off));
  };
  const uint32_t header_size = file.header_bytes();

  Options o;
  o.dim = file.Get<uint32_t>(fmt::kOffDim);
  o.M = file.Get<uint32_t>(fmt::kOffM);
  o.ef_construction = file.Get<uint32_t>(fmt::kOffEfConstruction);
  const uint8_t metric = file.Get<uint8_t>(fmt::kOffMetric);
  const uint64_t n = file.Get<uint64_t>(fmt::kOffNodeCount);
  const uint64_t live = file.Get<uint64_t>(fmt::kOffLiveCount);
  const uint32_t entry = file.Get<uint32_t>(fmt::kOffEntryPoint);
  const int32_t max_level = file.Get<int32_t>(fmt::kOffMaxLevel);
  if (metric > 1) return corrupt("unknown metric code " + std::to_string(metric), fmt::kOffMetric);
  o.metric = static_cast<Metric>(metric);
  Status st = ValidateOptions(o);
  if (!st.ok()) return corrupt("bad parameters: " + st.message(), fmt::kOffDim);
  // Bound the node count by the bytes actually present before allocating.
  const uint64_t vec_node = 4ull * o.dim;
  const uint64_t per_node = 8 + 1 + 1 + (refs ? 0 : vec_node) + 4ull * (1 + 2ull * o.M);
  if (n >= 0xFFFFFFFFull || n > file.body_bytes() / per_node) {
    return corrupt("node count " + std::to_string(n) + " does not fit the file (truncated?)",
                   fmt::kOffNodeCount);
  }
  const uint64_t ref_count = refs ? file.Get<uint64_t>(fmt::kOffRefCount) : 0;
  const uint32_t ref_crc = refs ? file.Get<uint32_t>(fmt::kOffRefCrc) : 0;
  if (ref_count > n) return corrupt("more referenced vectors than nodes", fmt::kOffRefCount);
  // The upper-level link arrays size the rest of the file: check the length
  // first so a cut-off file reads as truncated rather than as a bad checksum.
  const size_t levels_off = header_size + n * 8;
  uint64_t upper_words = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t level = static_cast<uint8_t>(p[levels_off + i]);
    if (level > kMaxLevel) return corrupt("node level over the maximum", levels_off + i);
    upper_words += static_cast<uint64_t>(level) * (o.M + 1);
  }
  sidecar::SizeSum expect(header_size);
  expect.Add(n, per_node).Add(upper_words, 4).Add(1, fmt::kTrailerSize);
  if (refs) expect.Add(n - ref_count, vec_node);
  CHITTA_RETURN_IF_ERROR(file.CheckSize(expect, static_cast<int64_t>(size)));
  CHITTA_RETURN_IF_ERROR(file.CheckCrc());
  if (live > n) return corrupt("live count exceeds node count", fmt::kOffLiveCount);
  if (n == 0 ? (entry != fmt::kNoEntry || max_level != -1)
             : (entry >= n || max_level < 0 || max_level > kMaxLevel)) {
    return corrupt("bad entry point / top level", fmt::kOffEntryPoint);
  }

  auto index = std::make_unique<HnswIndex>(o);
  index->rng_state_ = file.Get<uint64_t>(fmt::kOffRngState);
  index->Reserve(n);
  size_t off = header_size;
  if (n > 0) {
    std::memcpy(index->labels_.data(), p + off, n * 8);
    std::memcpy(index->levels_.data(), p + off + n * 8, n);
  }
  off += n * 8;
  off += n;
  const size_t flags_off = off;
  off += n;
  const uint8_t known = refs ? (fmt::kFlagDeleted | fmt::kFlagRefVector) : fmt::kFlagDeleted;
  std::vector<uint8_t> is_ref(n, 0);
  uint64_t refs_seen = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t flags = static_cast<uint8_t>(p[flags_off + i]);
    if ((flags & ~known) != 0) return corrupt("unknown node flag", flags_off + i);
    index->deleted_[i] = flags & fmt::kFlagDeleted;
    is_ref[i] = (flags & fmt::kFlagRefVector) != 0;
    if (is_ref[i] && index->deleted_[i]) {
      return corrupt("a deleted node's vector is a reference", flags_off + i);
    }
    refs_seen += is_ref[i];
  }
  if (refs_seen != ref_count) {
    return corrupt("referenced vector count does not match the flags", fmt::kOffRefCount);
  }
  if (ref_count > 0 && rows == nullptr) {
    return corrupt("the graph refers to " + std::to_string(ref_count) +
                       " vectors held elsewhere and none were given",
                   fmt::kOffRefCount);
  }
  if (rows != nullptr && rows->dim() != o.dim) {
    return corrupt("the given rows have " + std::to_string(rows->dim()) + " columns", fmt::kOffDim);
  }
  if (n > 0 && index->levels_[entry] != max_level) {
    return corrupt("entry point is not on the top level", fmt::kOffEntryPoint);
  }
  const size_t vec_bytes = o.dim * sizeof(float);
  uint32_t crc = 0;
  for (uint64_t i = 0; i < n; ++i) {
    float* v = index->MutableVector(static_cast<uint32_t>(i));
    if (is_ref[i]) {
      const uint64_t label = index->labels_[i];
      const float* row = rows->Find(label);
      if (row == nullptr || !PrepareVector(o.metric, row, o.dim, v).ok()) {
        return corrupt("the vector of id " + std::to_string(label) +
                           " the graph refers to is missing or invalid",
                       header_size + 8 * i);
      }
      crc = crc32c::Extend(crc, v, vec_bytes);
      continue;
    }
    std::memcpy(v, p + off, vec_bytes);
    for (uint32_t d = 0; d < o.dim; ++d) {
      if (!std::isfinite(v[d])) return corrupt("non-finite vector value", off);
    }
    off += vec_bytes;
  }
  if (crc != ref_crc) {
    return corrupt("the referenced vectors are not the ones the graph was saved with",
                   fmt::kOffRefCrc);
  }
  for (uint64_t i = 0; i < n; ++i, off += index->links0_bytes_) {
    std::memcpy(index->Links0(static_cast<uint32_t>(i)), p + off, index->links0_bytes_);
  }
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t level = index->levels_[i];
    if (level == 0) continue;
    const size_t words = static_cast<size_t>(level) * (o.M + 1);
    index->upper_[i].reset(new uint32_t[words]);
    std::memcpy(index->upper_[i].get(), p + off, words * 4);
    off += words * 4;
  }
  index->count_ = n;
  index->entry_point_ = n > 0 ? entry : 0;
  index->max_level_ = max_level;
  st = index->CheckIntegrity();
  if (!st.ok()) return corrupt(st.message(), header_size);
  index->label_to_node_.reserve(live);
  for (uint32_t i = 0; i < n; ++i) {
    if (index->deleted_[i]) continue;
    const uint64_t label = index->labels_[i];
    if (label == kNoId || !index->label_to_node_.emplace(label, i).second) {
      return corrupt("duplicate or reserved live id " + std::to_string(label), header_size + 8 * i);
    }
  }
  if (index->label_to_node_.size() != live) {
    return corrupt("live count does not match the deletion flags", fmt::kOffLiveCount);
  }
  return index;
}

}  // namespace chitta::hnsw
