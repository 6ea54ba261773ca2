// csrc/posting/id_map.h
// Open-addressing hash map from a memory's 64-bit id to its dense u32 ordinal.
// Linear probing, power-of-two capacity, load factor <= 0.7, backward-shift
// deletion (no tombstones). The key kEmptyKey (2**64-1, the result padding id)
// marks a free slot and can never be stored; callers reject it first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chitta::posting {

class IdMap {
 public:
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};
  static constexpr uint32_t kMissing = ~uint32_t{0};

  IdMap() = default;

  // The ordinal stored for `key`, or kMissing.
  uint32_t Find(uint64_t key) const;
  bool Contains(uint64_t key) const { return Find(key) != kMissing; }
  // Stores key -> value. Returns false (and changes nothing) if the key is
  // already present or is kEmptyKey.
  bool Insert(uint64_t key, uint32_t value);
  // Removes `key`; returns false if it was absent.
  bool Erase(uint64_t key);
  // Makes room for `n` keys in total without rehashing.
  void Reserve(size_t n);
  void Clear();

  size_t size() const { return size_; }
  size_t MemoryBytes() const;

 private:
  size_t SlotFor(uint64_t key) const;
  void Rehash(size_t new_capacity);

  std::vector<uint64_t> keys_;
  std::vector<uint32_t> values_;
  size_t size_ = 0;
  size_t mask_ = 0;  // capacity - 1, capacity a power of two (0 when empty)
};

}  // namespace chitta::posting
