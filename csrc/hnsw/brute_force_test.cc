#include "hnsw/brute_force.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "hnsw/test_util.h"

namespace chitta::hnsw {
namespace {

TEST(BruteForce, MatchesNaiveDoubleScan) {
  const size_t dim = 8, n = 200, k = 5;
  auto data = testing::Clustered(n, dim, 4, 5);
  auto ids = testing::Iota(n, 7);
  BruteForceIndex bf(dim, Metric::kCosine);
  ASSERT_TRUE(bf.Add(ids.data(), data.data(), n).ok());
  auto q = testing::Near(data, dim, 10, 6);
  std::vector<uint64_t> out(10 * k);
  std::vector<float> dist(10 * k);
  ASSERT_TRUE(bf.Search(q.data(), 10, k, nullptr, 0, false, 2, out.data(), dist.data()).ok());
  for (size_t qi = 0; qi < 10; ++qi) {
    double qn = 0;
    for (size_t d = 0; d < dim; ++d) qn += q[qi * dim + d] * q[qi * dim + d];
    std::vector<std::pair<double, uint64_t>> all;
    for (size_t i = 0; i < n; ++i) {
      double dot = 0;
      for (size_t d = 0; d < dim; ++d) dot += q[qi * dim + d] * data[i * dim + d];
      all.emplace_back(1.0 - dot / std::sqrt(qn), ids[i]);  // data rows are unit length
    }
    std::sort(all.begin(), all.end());
    for (size_t j = 0; j < k; ++j) {
      EXPECT_EQ(all[j].second, out[qi * k + j]);
      EXPECT_NEAR(all[j].first, dist[qi * k + j], 1e-5);
    }
  }
}

TEST(BruteForce, RemovedIdsDisappearAndOthersStay) {
  const size_t dim = 4;
  auto data = testing::Clustered(50, dim, 3, 8);
  auto ids = testing::Iota(50);
  BruteForceIndex bf(dim, Metric::kCosine);
  ASSERT_TRUE(bf.Add(ids.data(), data.data(), 50).ok());
  std::vector<uint64_t> gone = {0, 49, 17};
  ASSERT_TRUE(bf.MarkDeleted(gone.data(), 3).ok());
  EXPECT_EQ(47u, bf.size());
  std::vector<uint64_t> out(50);
  std::vector<float> dist(50);
  ASSERT_TRUE(bf.Search(data.data(), 1, 50, nullptr, 0, false, 1, out.data(), dist.data()).ok());
  for (uint64_t g : gone) EXPECT_EQ(out.begin() + 47, std::find(out.begin(), out.begin() + 47, g));
  EXPECT_EQ(kNoId, out[47]);
  EXPECT_EQ(Code::kNotFound, bf.MarkDeleted(gone.data(), 1).code());
}

TEST(BruteForce, FilterKeepsOnlyAllowed) {
  const size_t dim = 4;
  auto data = testing::Clustered(30, dim, 3, 9);
  auto ids = testing::Iota(30);
  BruteForceIndex bf(dim, Metric::kCosine);
  ASSERT_TRUE(bf.Add(ids.data(), data.data(), 30).ok());
  std::vector<uint64_t> allowed = {3, 4, 999};
  std::vector<uint64_t> out(5);
  std::vector<float> dist(5);
  ASSERT_TRUE(bf.Search(data.data(), 1, 5, allowed.data(), 3, true, 1, out.data(), dist.data()).ok());
  EXPECT_TRUE(out[0] == 3 || out[0] == 4);
  EXPECT_TRUE(out[1] == 3 || out[1] == 4);
  EXPECT_EQ(kNoId, out[2]);
}

TEST(BruteForce, BadDimRejected) {
  EXPECT_EQ(Code::kInvalidArgument, BruteForceIndex::Create(0, Metric::kCosine).status().code());
}

}  // namespace
}  // namespace chitta::hnsw
