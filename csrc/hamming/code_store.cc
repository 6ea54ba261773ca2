// csrc/hamming/code_store.cc
#include "hamming/code_store.h"

#include <algorithm>
#include <string>

namespace chitta::hamming {
namespace {

// Returns an id that occurs twice in ids[0..n), if any.
bool FindRepeat(const uint64_t* ids, size_t n, uint64_t* repeated) {
  std::vector<uint64_t> sorted(ids, ids + n);
  std::sort(sorted.begin(), sorted.end());
  auto it = std::adjacent_find(sorted.begin(), sorted.end());
  if (it == sorted.end()) return false;
  *repeated = *it;
  return true;
}

}  // namespace

Status CodeStore::CheckAdd(const uint64_t* ids, size_t n) const {
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] == kPadId) {
      return Status::InvalidArgument("id 2**64-1 is reserved (it pads short search results)");
    }
    if (Contains(ids[i])) {
      return Status::InvalidArgument("id " + std::to_string(ids[i]) + " is already in the index");
    }
  }
  uint64_t repeated;
  if (FindRepeat(ids, n, &repeated)) {
    return Status::InvalidArgument("id " + std::to_string(repeated) + " occurs twice in the batch");
  }
  return Status::OK();
}

Status CodeStore::CheckRemove(const uint64_t* ids, size_t n) const {
  for (size_t i = 0; i < n; ++i) {
    if (!Contains(ids[i])) {
      return Status::NotFound("id " + std::to_string(ids[i]) + " is not in the index");
    }
  }
  uint64_t repeated;
  if (FindRepeat(ids, n, &repeated)) {
    return Status::InvalidArgument("id " + std::to_string(repeated) + " occurs twice in the batch");
  }
  return Status::OK();
}

void CodeStore::Reserve(size_t n) {
  ids_.reserve(ids_.size() + n);
  codes_.reserve(codes_.size() + n * words_);
  if (external_) refs_.reserve(refs_.size() + n);
  else rows_.reserve(rows_.size() + n * dim_);
  dead_.reserve(dead_.size() + n);
  slot_of_.reserve(slot_of_.size() + n);
}

void CodeStore::Append(const uint64_t* ids, const uint64_t* codes, const float* rows, size_t n,
                       const int64_t* refs) {
  for (size_t i = 0; i < n; ++i) {
    slot_of_.emplace(ids[i], ids_.size());
    ids_.push_back(ids[i]);
    dead_.push_back(0);
  }
  codes_.insert(codes_.end(), codes, codes + n * words_);
  if (external_) refs_.insert(refs_.end(), refs, refs + n);
  else if (dim_ > 0) rows_.insert(rows_.end(), rows, rows + n * dim_);
}

void CodeStore::Erase(const uint64_t* ids, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    auto it = slot_of_.find(ids[i]);
    if (it == slot_of_.end()) continue;  // CheckRemove rules this out
    dead_[it->second] = 1;
    ++dead_count_;
    slot_of_.erase(it);
  }
  if (dead_count_ * 4 > ids_.size()) Compact();
}

void CodeStore::Compact() {
  size_t w = 0;
  for (size_t r = 0; r < ids_.size(); ++r) {
    if (dead_[r] != 0) continue;
    if (w != r) {
      ids_[w] = ids_[r];
      std::copy_n(codes_.begin() + static_cast<std::ptrdiff_t>(r * words_), words_,
                  codes_.begin() + static_cast<std::ptrdiff_t>(w * words_));
      if (external_) {
        refs_[w] = refs_[r];
      } else if (dim_ > 0) {
        std::copy_n(rows_.begin() + static_cast<std::ptrdiff_t>(r * dim_), dim_,
                    rows_.begin() + static_cast<std::ptrdiff_t>(w * dim_));
      }
      slot_of_[ids_[w]] = w;
    }
    ++w;
  }
  ids_.resize(w);
  codes_.resize(w * words_);
  if (external_) refs_.resize(w);
  else if (dim_ > 0) rows_.resize(w * dim_);
  dead_.assign(w, 0);
  dead_count_ = 0;
}

void CodeStore::Search(FilterFn filter, const uint64_t* query, size_t k,
                       std::vector<Neighbor>* out) const {
  TopK(filter, query, codes_.data(), ids_.size(), words_, dead_count_ > 0 ? dead_.data() : nullptr,
       k, out);
}

size_t CodeStore::MemoryBytes() const {
  // Vectors by capacity; the hash map by nodes (key, value, next pointer,
  // cached hash) plus its bucket array.
  const size_t map_bytes = slot_of_.size() * (2 * sizeof(uint64_t) + 2 * sizeof(void*)) +
                           slot_of_.bucket_count() * sizeof(void*);
  return sizeof(*this) + ids_.capacity() * sizeof(uint64_t) +
         codes_.capacity() * sizeof(uint64_t) + rows_.capacity() * sizeof(float) +
         refs_.capacity() * sizeof(int64_t) +
         dead_.capacity() + map_bytes;
}

}  // namespace chitta::hamming
