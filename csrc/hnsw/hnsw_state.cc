// csrc/hnsw/hnsw_state.cc
// Whole-index helpers: stored-vector lookup, deep copy (used by tier merges),
// memory accounting (benchmarks) and the graph invariant check (tests, Load).
#include <algorithm>
#include <cstring>
#include <string>

#include "hnsw/hnsw.h"

namespace chitta::hnsw {

const float* HnswIndex::StoredVector(uint64_t id) const {
  auto it = label_to_node_.find(id);
  return it == label_to_node_.end() ? nullptr : VectorOf(it->second);
}

std::unique_ptr<HnswIndex> HnswIndex::Clone() const {
  auto copy = std::make_unique<HnswIndex>(options_);
  copy->Reserve(count_);
  if (count_ > 0) std::memcpy(copy->level0_.get(), level0_.get(), count_ * block_bytes_);
  std::copy(labels_.begin(), labels_.begin() + count_, copy->labels_.begin());
  std::copy(levels_.begin(), levels_.begin() + count_, copy->levels_.begin());
  std::copy(deleted_.begin(), deleted_.begin() + count_, copy->deleted_.begin());
  for (size_t i = 0; i < count_; ++i) {
    if (levels_[i] > 0) {
      const size_t words = static_cast<size_t>(levels_[i]) * (M_ + 1);
      copy->upper_[i].reset(new uint32_t[words]);
      std::memcpy(copy->upper_[i].get(), upper_[i].get(), words * sizeof(uint32_t));
    }
  }
  copy->count_ = count_;
  copy->label_to_node_ = label_to_node_;
  copy->entry_point_ = entry_point_;
  copy->max_level_ = max_level_;
  copy->rng_state_ = rng_state_;
  return copy;
}

size_t HnswIndex::MemoryBytes() const {
  size_t bytes = capacity_ * (block_bytes_ + sizeof(uint64_t) + 2 + sizeof(void*));
  for (size_t i = 0; i < count_; ++i) bytes += static_cast<size_t>(levels_[i]) * (M_ + 1) * 4;
  // unordered_map: one bucket pointer per bucket, one heap node per entry.
  bytes += label_to_node_.bucket_count() * sizeof(void*) +
           label_to_node_.size() * (sizeof(void*) + sizeof(uint64_t) + sizeof(uint32_t) + 4);
  bytes += kStripes * sizeof(std::mutex);
  return bytes;
}

Status HnswIndex::CheckIntegrity() const {
  if (count_ > 0 && (max_level_ < 0 || entry_point_ >= count_ ||
                     levels_[entry_point_] != max_level_)) {
    return Status::Corruption("bad entry point");
  }
  for (uint32_t i = 0; i < count_; ++i) {
    for (int lc = 0; lc <= levels_[i]; ++lc) {
      const uint32_t* l = Links(i, lc);
      if (l[0] > MaxLinks(lc)) return Status::Corruption("link count over the cap");
      for (uint32_t j = 1; j <= l[0]; ++j) {
        if (l[j] >= count_ || l[j] == i || levels_[l[j]] < lc) {
          return Status::Corruption("bad link at node " + std::to_string(i));
        }
      }
    }
  }
  return Status::OK();
}

}  // namespace chitta::hnsw
