// csrc/hamming/code_store.h
// Slot-ordered storage behind both Hamming indexes: per slot an id, a binary
// code of `words` u64 and (when dim > 0) a float32 row, or, for a store of
// external rows, the number of the row in a matrix its owner keeps. Slots are
// in insertion order, which is the tie-break order of every search.
//
// Removal marks a slot dead (tombstone); a search skips dead slots. When more
// than a quarter of the slots are dead, the store compacts in place, keeping
// the order of the live slots, so insertion order survives removals. Re-adding
// a removed id is a new insertion (it goes last).
//
// Not thread-safe: the index classes hold the lock. Check* validate a batch
// without changing anything; Append / Erase must only follow a passing Check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "chitta/status.h"
#include "hamming/topk.h"

namespace chitta::hamming {

// Ids may be any u64 except this one, which pads short search results.
constexpr uint64_t kPadId = ~uint64_t{0};

class CodeStore {
 public:
  CodeStore(size_t words, size_t dim, bool external_rows = false)
      : words_(words), dim_(dim), external_(external_rows) {}
  bool external_rows() const { return external_; }

  size_t words() const { return words_; }
  size_t dim() const { return dim_; }
  size_t live() const { return ids_.size() - dead_count_; }
  size_t slots() const { return ids_.size(); }
  bool Contains(uint64_t id) const { return slot_of_.count(id) != 0; }

  // InvalidArgument for the pad id, an id already live, or one repeated in the batch.
  [[nodiscard]] Status CheckAdd(const uint64_t* ids, size_t n) const;
  // NotFound for an id not live; InvalidArgument for one repeated in the batch.
  [[nodiscard]] Status CheckRemove(const uint64_t* ids, size_t n) const;

  // codes: n x words; rows: n x dim (ignored when dim == 0 or the rows are external);
  // refs: n row numbers (external rows only).
  void Append(const uint64_t* ids, const uint64_t* codes, const float* rows, size_t n,
              const int64_t* refs = nullptr);
  void Erase(const uint64_t* ids, size_t n);
  void Reserve(size_t n);

  // Top-k live slots by Hamming distance to query, sorted by (dist, slot).
  void Search(FilterFn filter, const uint64_t* query, size_t k, std::vector<Neighbor>* out) const;

  uint64_t id_at(uint64_t slot) const { return ids_[slot]; }
  bool dead_at(uint64_t slot) const { return dead_[slot] != 0; }
  const uint64_t* code_at(uint64_t slot) const { return codes_.data() + slot * words_; }
  const float* row_at(uint64_t slot) const { return rows_.data() + slot * dim_; }
  int64_t ref_at(uint64_t slot) const { return refs_[slot]; }

  size_t MemoryBytes() const;

 private:
  void Compact();

  size_t words_;
  size_t dim_;
  bool external_;
  std::vector<uint64_t> ids_;
  std::vector<int64_t> refs_;  // external rows only
  std::vector<uint64_t> codes_;
  std::vector<float> rows_;
  std::vector<uint8_t> dead_;
  size_t dead_count_ = 0;
  std::unordered_map<uint64_t, uint64_t> slot_of_;  // live ids only
};

}  // namespace chitta::hamming
