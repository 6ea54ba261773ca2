// csrc/util/hash_slots.h
// Shared pieces of the open-addressing u64-key tables (util/row_map,
// posting/id_map): the key mixer and the power-of-two capacity rule.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chitta::hash_slots {

// splitmix64 finaliser: ids are often sequential, so mix all bits.
inline uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

constexpr size_t kMinCapacity = 16;

// Smallest power-of-two capacity holding n keys at load <= 0.7.
inline size_t CapacityFor(size_t n) {
  size_t cap = kMinCapacity;
  while (cap * 7 < n * 10) cap <<= 1;
  return cap;
}

}  // namespace chitta::hash_slots
