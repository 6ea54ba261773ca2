// csrc/util/row_map.cc
#include "util/row_map.h"

#include <algorithm>
#include <string>

#include "util/hash_slots.h"

namespace chitta::util {
using hash_slots::CapacityFor;
using hash_slots::Mix;


size_t RowMap::Home(uint64_t id) const { return static_cast<size_t>(Mix(id)) & mask_; }

void RowMap::Prefetch(size_t slot) const {
  __builtin_prefetch(keys_.data() + slot, 1);
  __builtin_prefetch(rows_.data() + slot, 1);
}

int64_t RowMap::Row(uint64_t id) const {
  if (keys_.empty()) return -1;
  for (size_t i = Home(id);; i = (i + 1) & mask_) {
    const uint32_t row = rows_[i];
    if (row == kFreeRow) return -1;
    if (keys_[i] == id) return row;
  }
}

void RowMap::Rows(const uint64_t* ids, size_t n, int64_t* out) const {
  for (size_t i = 0; i < n; ++i) out[i] = Row(ids[i]);
}

void RowMap::Place(uint64_t id, uint32_t row) {
  size_t i = Home(id);
  while (rows_[i] != kFreeRow) i = (i + 1) & mask_;
  keys_[i] = id;
  rows_[i] = row;
}

int64_t RowMap::AddOne(uint64_t id) {
  if (ids_.size() >= kMaxRows) return -1;
  if (keys_.empty() || (ids_.size() + 1) * 10 > keys_.size() * 7) {
    Rehash(CapacityFor(ids_.size() + 1));
  }
  size_t i = Home(id);
  for (; rows_[i] != kFreeRow; i = (i + 1) & mask_) {
    if (keys_[i] == id) return -1;
  }
  const auto row = static_cast<uint32_t>(ids_.size());
  keys_[i] = id;
  rows_[i] = row;
  ids_.push_back(id);
  return row;
}

Status RowMap::Add(const uint64_t* ids, size_t n, uint8_t* is_new) {
  if (n > kMaxRows - ids_.size()) {
    return Status::InvalidArgument("RowMap full: " + std::to_string(ids_.size()) + " rows + " +
                                   std::to_string(n) + " ids would pass " +
                                   std::to_string(kMaxRows));
  }
  Reserve(ids_.size() + n);
  // Geometric growth: an exact reserve per batch would copy every id on every batch.
  if (ids_.size() + n > ids_.capacity()) ids_.reserve(std::max(ids_.size() + n, 2 * ids_.capacity()));
  constexpr size_t kAhead = 16;  // prefetch the slot of the id this far ahead: misses overlap
  for (size_t k = 0; k < n; ++k) {
    if (k + kAhead < n) Prefetch(Home(ids[k + kAhead]));
    const uint64_t id = ids[k];
    size_t i = Home(id);
    bool present = false;
    for (; rows_[i] != kFreeRow; i = (i + 1) & mask_) {
      if (keys_[i] == id) {
        present = true;
        break;
      }
    }
    if (present) {
      is_new[k] = 0;
      continue;
    }
    keys_[i] = id;
    rows_[i] = static_cast<uint32_t>(ids_.size());
    ids_.push_back(id);
    is_new[k] = 1;
  }
  return Status::OK();
}

void RowMap::Reserve(size_t n) {
  const size_t cap = CapacityFor(n);
  if (cap > keys_.size()) Rehash(cap);
}

void RowMap::Rehash(size_t capacity) {
  keys_.assign(capacity, 0);
  rows_.assign(capacity, kFreeRow);
  mask_ = capacity - 1;
  // Re-placing from ids_ needs no copy of the old table.
  const size_t n = ids_.size();
  for (size_t row = 0; row < n; ++row) {
    if (row + 16 < n) Prefetch(Home(ids_[row + 16]));
    Place(ids_[row], static_cast<uint32_t>(row));
  }
}

size_t RowMap::MemoryBytes() const {
  return keys_.capacity() * sizeof(uint64_t) + rows_.capacity() * sizeof(uint32_t) +
         ids_.capacity() * sizeof(uint64_t);
}

}  // namespace chitta::util
