// csrc/util/row_map_test.cc
// RowMap against std::unordered_map + a row-order vector as the oracle.
#include "util/row_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

namespace chitta::util {
namespace {

TEST(RowMap, EmptyFindsNothing) {
  RowMap m;
  EXPECT_EQ(0u, m.size());
  EXPECT_EQ(-1, m.Row(0));
  EXPECT_EQ(-1, m.Row(~uint64_t{0}));
  EXPECT_FALSE(m.Contains(7));
  EXPECT_TRUE(m.ids().empty());
}

TEST(RowMap, ZeroAndMaxIdAreOrdinaryIds) {
  RowMap m;
  const uint64_t ids[] = {~uint64_t{0}, 0, 1};
  uint8_t is_new[3];
  ASSERT_TRUE(m.Add(ids, 3, is_new).ok());
  EXPECT_EQ(1, is_new[0] & is_new[1] & is_new[2]);
  EXPECT_EQ(0, m.Row(~uint64_t{0}));
  EXPECT_EQ(1, m.Row(0));
  EXPECT_EQ(2, m.Row(1));
  EXPECT_EQ(-1, m.Row(2));
}

TEST(RowMap, FirstOccurrenceWinsInsideOneAdd) {
  RowMap m;
  const uint64_t ids[] = {5, 9, 5, 9, 4};
  uint8_t is_new[5];
  ASSERT_TRUE(m.Add(ids, 5, is_new).ok());
  const uint8_t want[] = {1, 1, 0, 0, 1};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(want[i], is_new[i]) << i;
  EXPECT_EQ((std::vector<uint64_t>{5, 9, 4}), m.ids());
  EXPECT_EQ(-1, m.AddOne(9));
  EXPECT_EQ(3, m.AddOne(10));
}

TEST(RowMap, RowsFillsMinusOneForAbsent) {
  RowMap m;
  EXPECT_EQ(0, m.AddOne(100));
  const uint64_t q[] = {100, 101};
  int64_t out[2];
  m.Rows(q, 2, out);
  EXPECT_EQ(0, out[0]);
  EXPECT_EQ(-1, out[1]);
}

TEST(RowMap, RandomBatchesMatchOracleAcrossRehashes) {
  std::mt19937_64 rng(7);
  RowMap m;
  std::unordered_map<uint64_t, int64_t> ref;
  std::vector<uint64_t> order;
  for (int batch = 0; batch < 300; ++batch) {
    const size_t n = rng() % 700;
    std::vector<uint64_t> ids(n);
    for (auto& id : ids) {
      // Small space for duplicates, sequential and high-bit ids for probe runs.
      switch (rng() % 3) {
        case 0: id = rng() % 20000; break;
        case 1: id = (rng() % 20000) << 44; break;
        default: id = rng(); break;
      }
    }
    std::vector<uint8_t> is_new(n);
    ASSERT_TRUE(m.Add(ids.data(), n, is_new.data()).ok());
    for (size_t i = 0; i < n; ++i) {
      const bool fresh = ref.emplace(ids[i], static_cast<int64_t>(order.size())).second;
      if (fresh) order.push_back(ids[i]);
      ASSERT_EQ(fresh, is_new[i] == 1);
    }
    ASSERT_EQ(ref.size(), m.size());
  }
  EXPECT_GT(m.size(), 50000u);  // several rehashes from 16 slots
  EXPECT_EQ(order, m.ids());
  for (const auto& [id, row] : ref) ASSERT_EQ(row, m.Row(id));
  for (int i = 0; i < 10000; ++i) {
    const uint64_t q = rng();
    const auto it = ref.find(q);
    ASSERT_EQ(it == ref.end() ? -1 : it->second, m.Row(q));
  }
  EXPECT_GT(m.MemoryBytes(), m.size() * 8);
}

TEST(RowMap, ReserveKeepsContents) {
  RowMap m;
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(static_cast<int64_t>(i), m.AddOne(i * 3));
  m.Reserve(100000);
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(static_cast<int64_t>(i), m.Row(i * 3));
  EXPECT_EQ(-1, m.Row(1));
}

}  // namespace
}  // namespace chitta::util
