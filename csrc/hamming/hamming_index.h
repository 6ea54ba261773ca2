// csrc/hamming/hamming_index.h
// HammingIndex: ids -> binary codes of a fixed width (any positive multiple
// of 64 bits), exact top-k by Hamming distance with ties broken by insertion
// order. Searches share a lock; add/remove take it exclusively. Every
// mutation is all-or-nothing: a failed check changes nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "chitta/status.h"
#include "hamming/code_store.h"

namespace chitta::hamming {

class HammingIndex {
 public:
  // InvalidArgument unless bits is a positive multiple of 64 (at most 65536).
  static Result<std::unique_ptr<HammingIndex>> Create(uint64_t bits);
  static Status CheckBits(uint64_t bits);

  size_t bits() const { return 64 * store_.words(); }
  size_t words() const { return store_.words(); }
  size_t size() const;
  bool Contains(uint64_t id) const;
  size_t MemoryBytes() const;

  // codes: n x words() u64.
  [[nodiscard]] Status Add(const uint64_t* ids, const uint64_t* codes, size_t n);
  [[nodiscard]] Status Remove(const uint64_t* ids, size_t n);

  // For each of nq queries (nq x words() u64) writes k ids and distances to
  // out_ids / out_dist (nq x k), nearest first. Short rows are padded with
  // id kPadId and distance bits() + 1. InvalidArgument if k == 0.
  [[nodiscard]] Status Search(const uint64_t* queries, size_t nq, size_t k, uint64_t* out_ids,
                              uint32_t* out_dist) const;

  // Live ids in insertion order.
  std::vector<uint64_t> Ids() const;

  // Code file (FORMAT.md): live entries in insertion order, CRC-32C footer.
  // Written to path + ".tmp", then renamed over path.
  [[nodiscard]] Status Save(const std::string& path) const;
  static Result<std::unique_ptr<HammingIndex>> Load(const std::string& path);

 private:
  explicit HammingIndex(size_t words) : store_(words, 0) {}

  mutable std::shared_mutex mu_;
  CodeStore store_;
};

}  // namespace chitta::hamming
