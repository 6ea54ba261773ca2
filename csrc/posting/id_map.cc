// csrc/posting/id_map.cc
#include "posting/id_map.h"

#include "util/hash_slots.h"

namespace chitta::posting {
using hash_slots::CapacityFor;
using hash_slots::Mix;


size_t IdMap::SlotFor(uint64_t key) const { return static_cast<size_t>(Mix(key)) & mask_; }

uint32_t IdMap::Find(uint64_t key) const {
  if (keys_.empty() || key == kEmptyKey) return kMissing;
  for (size_t i = SlotFor(key);; i = (i + 1) & mask_) {
    if (keys_[i] == key) return values_[i];
    if (keys_[i] == kEmptyKey) return kMissing;
  }
}

bool IdMap::Insert(uint64_t key, uint32_t value) {
  if (key == kEmptyKey) return false;
  if (keys_.empty() || (size_ + 1) * 10 > keys_.size() * 7) Rehash(CapacityFor(size_ + 1));
  for (size_t i = SlotFor(key);; i = (i + 1) & mask_) {
    if (keys_[i] == key) return false;
    if (keys_[i] == kEmptyKey) {
      keys_[i] = key;
      values_[i] = value;
      ++size_;
      return true;
    }
  }
}

bool IdMap::Erase(uint64_t key) {
  if (keys_.empty() || key == kEmptyKey) return false;
  size_t i = SlotFor(key);
  while (keys_[i] != key) {
    if (keys_[i] == kEmptyKey) return false;
    i = (i + 1) & mask_;
  }
  // Backward-shift: move later entries of the probe run into the hole when
  // their home slot does not lie cyclically in (hole, j].
  size_t hole = i;
  for (size_t j = (hole + 1) & mask_; keys_[j] != kEmptyKey; j = (j + 1) & mask_) {
    size_t home = SlotFor(keys_[j]);
    bool home_in_range = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (!home_in_range) {
      keys_[hole] = keys_[j];
      values_[hole] = values_[j];
      hole = j;
    }
  }
  keys_[hole] = kEmptyKey;
  --size_;
  return true;
}

void IdMap::Reserve(size_t n) {
  size_t cap = CapacityFor(n);
  if (cap > keys_.size()) Rehash(cap);
}

void IdMap::Clear() {
  keys_.clear();
  keys_.shrink_to_fit();
  values_.clear();
  values_.shrink_to_fit();
  size_ = 0;
  mask_ = 0;
}

void IdMap::Rehash(size_t new_capacity) {
  std::vector<uint64_t> old_keys(new_capacity, kEmptyKey);
  std::vector<uint32_t> old_values(new_capacity, 0);
  old_keys.swap(keys_);
  old_values.swap(values_);
  mask_ = new_capacity - 1;
  for (size_t s = 0; s < old_keys.size(); ++s) {
    if (old_keys[s] == kEmptyKey) continue;
    size_t i = SlotFor(old_keys[s]);
    while (keys_[i] != kEmptyKey) i = (i + 1) & mask_;
    keys_[i] = old_keys[s];
    values_[i] = old_values[s];
  }
}

size_t IdMap::MemoryBytes() const {
  return keys_.capacity() * sizeof(uint64_t) + values_.capacity() * sizeof(uint32_t);
}

}  // namespace chitta::posting
