#include "hnsw/tiered.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "hnsw/brute_force.h"
#include "hnsw/test_util.h"

namespace chitta::hnsw {
namespace {

constexpr size_t kDim = 16;

TieredOptions Opts(uint64_t threshold, double ratio) {
  TieredOptions o;
  o.graph.dim = kDim;
  o.graph.ef_construction = 60;
  o.threshold = threshold;
  o.merge_ratio = ratio;
  return o;
}

struct Out {
  std::vector<uint64_t> ids;
  std::vector<float> dist;
};

Out Query(const TieredIndex& t, const std::vector<float>& q, size_t k, size_t ef,
          MergeMode mode = MergeMode::kDistance) {
  const size_t nq = q.size() / kDim;
  Out o{std::vector<uint64_t>(nq * k), std::vector<float>(nq * k)};
  EXPECT_TRUE(t.Search(q.data(), nq, k, ef, nullptr, 0, false, mode, 1, o.ids.data(),
                       o.dist.data())
                  .ok());
  return o;
}

TEST(Tiered, InsertsPastThresholdGoToDelta) {
  TieredIndex t(Opts(100, 0.5));
  auto data = testing::Clustered(130, kDim, 4, 1);
  auto ids = testing::Iota(130);
  ASSERT_TRUE(t.Add(ids.data(), data.data(), 90, 1).ok());
  ASSERT_TRUE(t.Add(ids.data() + 90, data.data() + 90 * kDim, 40, 1).ok());
  EXPECT_EQ(100u, t.base_size());
  EXPECT_EQ(30u, t.delta_size());
  EXPECT_EQ(130u, t.size());
  EXPECT_FALSE(t.NeedsMerge());  // 30 <= 0.5 * 100
}

TEST(Tiered, SearchSpansBothTiersExactlyWhenEfCoversAll) {
  TieredIndex t(Opts(150, 10.0));
  BruteForceIndex bf(kDim, Metric::kCosine);
  auto data = testing::Clustered(250, kDim, 5, 2);
  auto ids = testing::Iota(250, 1);
  ASSERT_TRUE(t.Add(ids.data(), data.data(), 250, 1).ok());
  ASSERT_TRUE(bf.Add(ids.data(), data.data(), 250).ok());
  ASSERT_EQ(100u, t.delta_size());
  auto q = testing::Near(data, kDim, 20, 3);
  Out got = Query(t, q, 10, 250);
  std::vector<uint64_t> ti(200);
  std::vector<float> td(200);
  ASSERT_TRUE(bf.Search(q.data(), 20, 10, nullptr, 0, false, 1, ti.data(), td.data()).ok());
  for (size_t i = 0; i < td.size(); ++i) EXPECT_FLOAT_EQ(td[i], got.dist[i]);
}

TEST(Tiered, MergeFoldsDeltaIntoBaseAndKeepsAnswers) {
  TieredIndex t(Opts(200, 0.1));
  auto data = testing::Clustered(260, kDim, 5, 4);
  auto ids = testing::Iota(260);
  ASSERT_TRUE(t.Add(ids.data(), data.data(), 260, 2).ok());
  std::vector<uint64_t> gone = {5, 210};  // one per tier
  ASSERT_TRUE(t.MarkDeleted(gone.data(), 2).ok());
  EXPECT_TRUE(t.NeedsMerge());
  auto q = testing::Near(data, kDim, 10, 5);
  Out before = Query(t, q, 5, 260);
  bool merged = false;
  ASSERT_TRUE(t.Merge(false, 2, &merged).ok());
  EXPECT_TRUE(merged);
  EXPECT_EQ(258u, t.base_size());
  EXPECT_EQ(0u, t.delta_size());
  EXPECT_FALSE(t.Contains(210));
  Out after = Query(t, q, 5, 260);
  EXPECT_EQ(before.dist, after.dist);
  ASSERT_TRUE(t.Merge(false, 1, &merged).ok());
  EXPECT_FALSE(merged);  // nothing left to merge
}

TEST(Tiered, DuplicateAcrossTiersRejectedAndNothingChanges) {
  TieredIndex t(Opts(10, 0.1));
  auto data = testing::Clustered(20, kDim, 2, 6);
  auto ids = testing::Iota(20);
  ASSERT_TRUE(t.Add(ids.data(), data.data(), 20, 1).ok());
  std::vector<uint64_t> again = {100, 15};  // 15 is in the delta
  EXPECT_EQ(Code::kInvalidArgument, t.Add(again.data(), data.data(), 2, 1).code());
  EXPECT_EQ(20u, t.size());
  EXPECT_FALSE(t.Contains(100));
  std::vector<uint64_t> unknown = {3, 12, 999};
  EXPECT_EQ(Code::kNotFound, t.MarkDeleted(unknown.data(), 3).code());
  EXPECT_TRUE(t.Contains(3));
  EXPECT_TRUE(t.Contains(12));
}

TEST(Tiered, RrfAndDistanceMergeBothReturnValidIds) {
  TieredIndex t(Opts(60, 10.0));
  auto data = testing::Clustered(120, kDim, 3, 7);
  auto ids = testing::Iota(120);
  ASSERT_TRUE(t.Add(ids.data(), data.data(), 120, 1).ok());
  auto q = testing::Near(data, kDim, 5, 8);
  Out d = Query(t, q, 6, 120, MergeMode::kDistance);
  Out r = Query(t, q, 6, 120, MergeMode::kRrf);
  for (size_t i = 0; i < r.ids.size(); ++i) EXPECT_LT(r.ids[i], 120u);
  // RRF interleaves the tiers by rank, so its k-th hit is never nearer than
  // the distance merge's k-th.
  for (size_t qi = 0; qi < 5; ++qi) EXPECT_LE(d.dist[qi * 6 + 5], r.dist[qi * 6 + 5]);
}

TEST(Tiered, SaveLoadRoundTrip) {
  TieredIndex t(Opts(50, 10.0));
  auto data = testing::Clustered(80, kDim, 3, 9);
  auto ids = testing::Iota(80);
  ASSERT_TRUE(t.Add(ids.data(), data.data(), 80, 1).ok());
  const std::string b = ::testing::TempDir() + "chitta_tier.hnsw";
  const std::string d = ::testing::TempDir() + "chitta_tier.delta.hnsw";
  ASSERT_TRUE(t.Save(b, d).ok());
  auto loaded = TieredIndex::Load(b, d, 50, 10.0);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(50u, loaded.value()->base_size());
  EXPECT_EQ(30u, loaded.value()->delta_size());
  auto q = testing::Near(data, kDim, 5, 10);
  EXPECT_EQ(Query(t, q, 5, 40).ids, Query(*loaded.value(), q, 5, 40).ids);
  // The base file given twice: every id clashes.
  EXPECT_EQ(Code::kCorruption, TieredIndex::Load(b, b, 50, 10.0).status().code());
  std::remove(b.c_str());
  std::remove(d.c_str());
}

TEST(Tiered, SearchesProceedWhileMergeRuns) {
  TieredIndex t(Opts(300, 0.1));
  auto data = testing::Clustered(600, kDim, 6, 11);
  auto ids = testing::Iota(600);
  ASSERT_TRUE(t.Add(ids.data(), data.data(), 600, 2).ok());
  auto q = testing::Near(data, kDim, 4, 12);
  std::atomic<bool> done{false};
  std::atomic<int> searches{0};
  std::thread reader([&] {
    while (!done.load()) {
      Out o = Query(t, q, 5, 50);
      EXPECT_NE(kNoId, o.ids[0]);
      searches.fetch_add(1);
    }
  });
  bool merged = false;
  ASSERT_TRUE(t.Merge(true, 1, &merged).ok());
  done.store(true);
  reader.join();
  EXPECT_TRUE(merged);
  EXPECT_EQ(600u, t.base_size());
  EXPECT_GT(searches.load(), 0);
}

}  // namespace
}  // namespace chitta::hnsw
