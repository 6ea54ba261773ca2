// csrc/recall/dense_scan_test.cc
// DenseExactTopK equals one f32 dot per row and a full sort by (cosine desc,
// id asc), row for row and bit for bit: random and duplicated rows (ties
// broken by id, not by row), free rows skipped (zeroed, never returned),
// rows set anew in the quantized form, k past the live rows, no quant.
#include "recall/dense_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <vector>

namespace chitta::recall {
namespace {

constexpr size_t kDim = 384;

void Normalise(float* x, size_t dim) {
  double s = 0;
  for (size_t d = 0; d < dim; ++d) s += double(x[d]) * x[d];
  for (size_t d = 0; d < dim; ++d) x[d] = float(x[d] / std::sqrt(s));
}

std::vector<float> UnitRows(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> v(n * kDim);
  for (float& x : v) x = g(rng);
  for (size_t r = 0; r < n; ++r) Normalise(v.data() + r * kDim, kDim);
  return v;
}

// The reference: every live row's f32 dot, sorted by (cosine desc, id asc), first k.
std::vector<DenseHit> Reference(const std::vector<float>& rows, const std::vector<uint64_t>& ids,
                                const std::set<int64_t>& skip, const float* q, size_t k) {
  const hnsw::DotFn dot = hnsw::ChosenDot();
  std::vector<DenseHit> all;
  for (size_t r = 0; r < ids.size(); ++r) {
    if (!skip.count(static_cast<int64_t>(r))) all.push_back({ids[r], dot(q, rows.data() + r * kDim, kDim)});
  }
  std::sort(all.begin(), all.end(), [](const DenseHit& a, const DenseHit& b) {
    return a.cosine > b.cosine || (a.cosine == b.cosine && a.id < b.id);
  });
  all.resize(std::min(k, all.size()));
  return all;
}

void ExpectEqual(const std::vector<DenseHit>& want, const std::vector<DenseHit>& got, const char* what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t j = 0; j < want.size(); ++j) {
    ASSERT_EQ(want[j].id, got[j].id) << what << " position " << j;
    ASSERT_EQ(0, std::memcmp(&want[j].cosine, &got[j].cosine, sizeof(float))) << what << " position " << j;
  }
}

TEST(DenseScan, EqualsTheFullF32ScanWithTiesFreeRowsAndSetRows) {
  const size_t n = 3000;
  auto rows = UnitRows(n, 7);
  // Duplicates: rows 2000.. copy rows 0.., so ties at every rank must fall to the smaller id.
  std::memcpy(rows.data() + 2000 * kDim, rows.data(), 500 * kDim * sizeof(float));
  std::vector<uint64_t> ids(n);
  std::mt19937_64 rng(3);
  for (auto& id : ids) id = rng() >> 1;  // ids in no relation to rows
  QuantRows quant(kDim);
  quant.Append(rows.data(), 1000);
  quant.Append(rows.data() + 1000 * kDim, n - 1000);
  // Free rows: zeroed in f32 and in the codes, listed in skip.
  std::set<int64_t> skip;
  for (int64_t r : {5, 17, 2000, 2999, 1234}) {
    std::fill(rows.begin() + r * kDim, rows.begin() + (r + 1) * kDim, 0.0f);
    quant.Set(static_cast<size_t>(r), rows.data() + r * kDim);
    skip.insert(r);
  }
  // A row given a new vector: the codes made anew must keep the scan exact.
  auto fresh = UnitRows(1, 99);
  std::memcpy(rows.data() + 42 * kDim, fresh.data(), kDim * sizeof(float));
  quant.Set(42, fresh.data());
  std::vector<int64_t> skip_list(skip.begin(), skip.end());
  skip_list.push_back(-1);                          // ignored
  skip_list.push_back(static_cast<int64_t>(n) + 9);  // ignored
  const hnsw::DotFn dot = hnsw::ChosenDot();
  auto queries = UnitRows(20, 11);
  std::memcpy(queries.data(), rows.data() + 2001 * kDim, kDim * sizeof(float));  // a duplicated row
  std::memcpy(queries.data() + kDim, fresh.data(), kDim * sizeof(float));        // the set row
  for (size_t qi = 0; qi < 20; ++qi) {
    const float* q = queries.data() + qi * kDim;
    for (size_t k : {size_t{1}, size_t{5}, size_t{10}, size_t{64}, n + 7}) {
      const auto want = Reference(rows, ids, skip, q, k);
      std::vector<DenseHit> a, b;
      DenseExactTopK(&quant, rows.data(), ids.data(), n, kDim, dot, q, k, skip_list.data(),
                     skip_list.size(), &a);
      ExpectEqual(want, a, "quantized");
      DenseExactTopK(nullptr, rows.data(), ids.data(), n, kDim, dot, q, k, skip_list.data(),
                     skip_list.size(), &b);
      ExpectEqual(want, b, "plain");
    }
  }
  // The duplicated query's best two are the original and its copy, the smaller id first.
  std::vector<DenseHit> top;
  DenseExactTopK(&quant, rows.data(), ids.data(), n, kDim, dot, queries.data(), 2, skip_list.data(),
                 skip_list.size(), &top);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(0, std::memcmp(&top[0].cosine, &top[1].cosine, sizeof(float)));
  EXPECT_EQ(top[0].id, std::min(ids[1], ids[2001]));
  EXPECT_EQ(top[1].id, std::max(ids[1], ids[2001]));
}

TEST(DenseScan, AllRowsSkippedOrEmptyGivesNothing) {
  auto rows = UnitRows(4, 1);
  std::vector<uint64_t> ids = {1, 2, 3, 4};
  QuantRows quant(kDim);
  quant.Append(rows.data(), 4);
  const std::vector<int64_t> skip = {0, 1, 2, 3};
  std::vector<DenseHit> out;
  DenseExactTopK(&quant, rows.data(), ids.data(), 4, kDim, hnsw::ChosenDot(), rows.data(), 3,
                 skip.data(), skip.size(), &out);
  EXPECT_TRUE(out.empty());
  DenseExactTopK(&quant, rows.data(), ids.data(), 0, kDim, hnsw::ChosenDot(), rows.data(), 3,
                 nullptr, 0, &out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace chitta::recall
