// csrc/util/row_map.h
// Append-only map from a memory's 64-bit id to a dense u32 row: the i-th new
// id gets row i. Columnar organs keep their per-memory data in arrays indexed
// by this row. Open addressing with linear probing over a power-of-two table
// (load <= 0.7); a slot is free when its row is kFreeRow, so every u64 id,
// 0 and 2**64-1 included, can be stored. Rows are never removed (organs mark
// dead rows themselves). Not thread-safe for writers; readers may share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chitta/status.h"

namespace chitta::util {

class RowMap {
 public:
  static constexpr uint32_t kFreeRow = ~uint32_t{0};
  // Rows are 0 .. kMaxRows-1.
  static constexpr size_t kMaxRows = kFreeRow;

  RowMap() = default;

  size_t size() const { return ids_.size(); }

  // Adds `ids` in order. is_new[i] = 1 where ids[i] was absent (and not seen
  // earlier in this call): it got the next row. Duplicates get 0 and no row.
  // InvalidArgument (nothing changed) if size() + n could pass kMaxRows.
  Status Add(const uint64_t* ids, size_t n, uint8_t* is_new);
  // Adds one id; its row, or -1 if it was present (or the map is full).
  int64_t AddOne(uint64_t id);

  // The row of `id`, or -1.
  int64_t Row(uint64_t id) const;
  bool Contains(uint64_t id) const { return Row(id) >= 0; }
  // out[i] = Row(ids[i]).
  void Rows(const uint64_t* ids, size_t n, int64_t* out) const;

  // Every id in row order (ids()[row] is the id of that row).
  const std::vector<uint64_t>& ids() const { return ids_; }

  // Makes room for `n` ids in total without rehashing.
  void Reserve(size_t n);
  size_t MemoryBytes() const;

 private:
  void Prefetch(size_t slot) const;  // the cache lines of a slot, ahead of use
  size_t Home(uint64_t id) const;
  void Rehash(size_t capacity);
  // Inserts an id known to be absent, with room already made.
  void Place(uint64_t id, uint32_t row);

  std::vector<uint64_t> keys_;
  std::vector<uint32_t> rows_;  // kFreeRow marks a free slot
  std::vector<uint64_t> ids_;   // row -> id
  size_t mask_ = 0;             // capacity - 1 (0 when empty)
};

}  // namespace chitta::util
