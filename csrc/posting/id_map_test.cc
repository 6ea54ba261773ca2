// csrc/posting/id_map_test.cc
// IdMap against std::unordered_map as the oracle.
#include "posting/id_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace chitta::posting {
namespace {

TEST(IdMap, EmptyFindsNothing) {
  IdMap m;
  EXPECT_EQ(IdMap::kMissing, m.Find(0));
  EXPECT_FALSE(m.Erase(0));
  EXPECT_EQ(0u, m.size());
}

TEST(IdMap, RejectsEmptyKeyAndDuplicates) {
  IdMap m;
  EXPECT_FALSE(m.Insert(IdMap::kEmptyKey, 1));
  EXPECT_TRUE(m.Insert(5, 1));
  EXPECT_FALSE(m.Insert(5, 2));
  EXPECT_EQ(1u, m.Find(5));
  EXPECT_EQ(1u, m.size());
}

TEST(IdMap, RandomOpsMatchUnorderedMap) {
  std::mt19937_64 rng(42);
  IdMap m;
  std::unordered_map<uint64_t, uint32_t> ref;
  for (int step = 0; step < 200000; ++step) {
    // Small key space so inserts, erases and probe-run collisions all happen.
    uint64_t key = rng() % 4096;
    if (step % 7 == 0) key = (key << 40) | 3;  // high-bit keys too
    switch (rng() % 3) {
      case 0: {
        uint32_t v = static_cast<uint32_t>(rng());
        bool fresh = ref.emplace(key, v).second;
        ASSERT_EQ(fresh, m.Insert(key, v));
        break;
      }
      case 1:
        ASSERT_EQ(ref.erase(key) == 1, m.Erase(key));
        break;
      default: {
        auto it = ref.find(key);
        ASSERT_EQ(it == ref.end() ? IdMap::kMissing : it->second, m.Find(key));
      }
    }
    ASSERT_EQ(ref.size(), m.size());
  }
  for (const auto& [k, v] : ref) ASSERT_EQ(v, m.Find(k));
}

TEST(IdMap, ReserveKeepsEntries) {
  IdMap m;
  for (uint64_t k = 0; k < 1000; ++k) ASSERT_TRUE(m.Insert(k * 977, static_cast<uint32_t>(k)));
  m.Reserve(100000);
  for (uint64_t k = 0; k < 1000; ++k) ASSERT_EQ(k, m.Find(k * 977));
  m.Clear();
  EXPECT_EQ(0u, m.size());
  EXPECT_EQ(IdMap::kMissing, m.Find(977));
}

}  // namespace
}  // namespace chitta::posting
