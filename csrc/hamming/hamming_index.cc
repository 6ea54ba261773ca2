// csrc/hamming/hamming_index.cc
#include "hamming/hamming_index.h"

#include <mutex>

namespace chitta::hamming {

constexpr uint64_t kMaxBits = 65536;

Status HammingIndex::CheckBits(uint64_t bits) {
  if (bits == 0 || bits % 64 != 0 || bits > kMaxBits) {
    return Status::InvalidArgument("bits must be a positive multiple of 64 up to 65536, got " +
                                   std::to_string(bits));
  }
  return Status::OK();
}

Result<std::unique_ptr<HammingIndex>> HammingIndex::Create(uint64_t bits) {
  Status st = CheckBits(bits);
  if (!st.ok()) return st;
  return std::unique_ptr<HammingIndex>(new HammingIndex(bits / 64));
}

size_t HammingIndex::size() const {
  std::shared_lock lock(mu_);
  return store_.live();
}

bool HammingIndex::Contains(uint64_t id) const {
  std::shared_lock lock(mu_);
  return store_.Contains(id);
}

size_t HammingIndex::MemoryBytes() const {
  std::shared_lock lock(mu_);
  return sizeof(*this) - sizeof(store_) + store_.MemoryBytes();
}

Status HammingIndex::Add(const uint64_t* ids, const uint64_t* codes, size_t n) {
  std::unique_lock lock(mu_);
  CHITTA_RETURN_IF_ERROR(store_.CheckAdd(ids, n));
  store_.Append(ids, codes, nullptr, n);
  return Status::OK();
}

Status HammingIndex::Remove(const uint64_t* ids, size_t n) {
  std::unique_lock lock(mu_);
  CHITTA_RETURN_IF_ERROR(store_.CheckRemove(ids, n));
  store_.Erase(ids, n);
  return Status::OK();
}

Status HammingIndex::Search(const uint64_t* queries, size_t nq, size_t k, uint64_t* out_ids,
                            uint32_t* out_dist) const {
  if (k == 0) return Status::InvalidArgument("k must be positive");
  const FilterFn filter = ActiveFilter();
  const size_t words = store_.words();
  const uint32_t pad_dist = static_cast<uint32_t>(64 * words + 1);
  std::shared_lock lock(mu_);
  std::vector<Neighbor> hits;
  for (size_t q = 0; q < nq; ++q) {
    store_.Search(filter, queries + q * words, k, &hits);
    uint64_t* ids = out_ids + q * k;
    uint32_t* dist = out_dist + q * k;
    for (size_t j = 0; j < k; ++j) {
      if (j < hits.size()) {
        ids[j] = store_.id_at(hits[j].slot);
        dist[j] = hits[j].dist;
      } else {
        ids[j] = kPadId;
        dist[j] = pad_dist;
      }
    }
  }
  return Status::OK();
}

std::vector<uint64_t> HammingIndex::Ids() const {
  std::shared_lock lock(mu_);
  std::vector<uint64_t> out;
  out.reserve(store_.live());
  for (size_t s = 0; s < store_.slots(); ++s) {
    if (!store_.dead_at(s)) out.push_back(store_.id_at(s));
  }
  return out;
}

}  // namespace chitta::hamming
