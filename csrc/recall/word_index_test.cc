// csrc/recall/word_index_test.cc
// WordIndex against a double-precision brute-force oracle; ties by row; the
// graph above the limit; Start == Search bit for bit; bad arguments; adds
// while searches are in flight (run under the sanitizer build too).
#include "recall/word_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "hnsw/test_util.h"

namespace chitta::recall {
namespace {

using hnsw::testing::Clustered;
using hnsw::testing::Near;

std::unique_ptr<WordIndex> Make(uint32_t dim, size_t limit = 4096) {
  WordIndexOptions o;
  o.dim = dim;
  o.exact_limit = limit;
  o.ef_construction = 100;
  auto r = WordIndex::Create(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r.value());
}

// The oracle: cosines in double of every row with the unit query.
std::vector<double> OracleCosines(const std::vector<float>& rows, size_t dim, const float* q) {
  double qn = 0;
  for (size_t d = 0; d < dim; ++d) qn += double(q[d]) * q[d];
  qn = std::sqrt(qn);
  std::vector<double> out(rows.size() / dim);
  for (size_t i = 0; i < out.size(); ++i) {
    double s = 0;
    for (size_t d = 0; d < dim; ++d) s += double(rows[i * dim + d]) * q[d];
    out[i] = s / qn;
  }
  return out;
}

std::vector<WordHit> SearchOf(const WordIndex& w, const float* q, size_t want) {
  std::vector<WordHit> out;
  EXPECT_TRUE(w.Search(q, want, &out).ok());
  return out;
}

void ExpectSameHits(const std::vector<WordHit>& a, const std::vector<WordHit>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].row, b[i].row);
    EXPECT_EQ(0, std::memcmp(&a[i].cosine, &b[i].cosine, sizeof(float)));  // bit for bit
  }
}

TEST(WordIndex, ExactScanEqualsTheBruteForceOracle) {
  constexpr size_t kDim = 48, kN = 700;
  auto rows = Clustered(kN, kDim, 8, 11);
  auto w = Make(kDim);
  ASSERT_TRUE(w->Add(rows.data(), kN).ok());
  EXPECT_FALSE(w->has_graph());
  auto qs = Near(rows, kDim, 40, 5);
  for (size_t qi = 0; qi < 40; ++qi) {
    const float* q = qs.data() + qi * kDim;
    const auto cos = OracleCosines(rows, kDim, q);
    std::vector<uint32_t> order(kN);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return cos[a] > cos[b]; });
    const auto got = SearchOf(*w, q, 10);
    ASSERT_EQ(got.size(), 10u);
    for (size_t j = 0; j < 10; ++j) {
      EXPECT_NEAR(got[j].cosine, cos[got[j].row], 1e-5);
      // the same row as the oracle, unless the two are within float rounding
      if (got[j].row != order[j]) EXPECT_NEAR(cos[got[j].row], cos[order[j]], 1e-5);
      if (j > 0) EXPECT_GE(got[j - 1].cosine, got[j].cosine);
    }
  }
}

TEST(WordIndex, TiesGoToTheSmallerRow) {
  const std::vector<float> rows = {0, 1, 1, 0, 0.6f, 0.8f, 1, 0, 0, 1, 1, 0};
  auto w = Make(2);
  ASSERT_TRUE(w->Add(rows.data(), 6).ok());
  const float q[2] = {3, 0};  // not unit: normalised
  const auto got = SearchOf(*w, q, 4);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].row, 1u);
  EXPECT_EQ(got[1].row, 3u);
  EXPECT_EQ(got[2].row, 5u);
  EXPECT_EQ(got[3].row, 2u);
  EXPECT_FLOAT_EQ(got[0].cosine, 1.0f);
  EXPECT_FLOAT_EQ(got[3].cosine, 0.6f);
}

TEST(WordIndex, WantAboveTheSizeGivesEveryRowAndAZeroRowHasCosineZero) {
  const std::vector<float> rows = {0, 0, -1, 0, 0.28f, 0.96f};
  auto w = Make(2);
  ASSERT_TRUE(w->Add(rows.data(), 3).ok());
  const float q[2] = {1, 0};
  const auto got = SearchOf(*w, q, 50);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].row, 2u);
  EXPECT_EQ(got[1].row, 0u);
  EXPECT_EQ(got[1].cosine, 0.0f);
  EXPECT_EQ(got[2].row, 1u);
  auto empty = Make(2);
  EXPECT_TRUE(SearchOf(*empty, q, 3).empty());
}

TEST(WordIndex, TheGraphAboveTheLimitFindsTheExactNeighbours) {
  constexpr size_t kDim = 32, kN = 3000;
  auto rows = Clustered(kN, kDim, 20, 3);
  auto exact = Make(kDim, kN);
  auto graph = Make(kDim, 500);
  ASSERT_TRUE(exact->Add(rows.data(), kN).ok());
  ASSERT_TRUE(graph->Add(rows.data(), 400).ok());  // below the limit: no graph yet
  EXPECT_FALSE(graph->has_graph());
  ASSERT_TRUE(graph->Add(rows.data() + 400 * kDim, 1000).ok());  // crosses it: built
  EXPECT_TRUE(graph->has_graph());
  ASSERT_TRUE(graph->Add(rows.data() + 1400 * kDim, kN - 1400).ok());  // and extended
  EXPECT_EQ(graph->size(), kN);
  auto qs = Near(rows, kDim, 100, 9);
  size_t same = 0;
  for (size_t qi = 0; qi < 100; ++qi) {
    const float* q = qs.data() + qi * kDim;
    const auto a = SearchOf(*exact, q, 10);
    const auto b = SearchOf(*graph, q, 10);
    ASSERT_EQ(b.size(), 10u);
    std::set<uint32_t> truth;
    for (const auto& h : a) truth.insert(h.row);
    for (size_t j = 0; j < b.size(); ++j) {
      same += truth.count(b[j].row);
      if (j > 0) EXPECT_TRUE(b[j - 1].cosine >= b[j].cosine);
    }
    for (const auto& h : b) {  // the same cosine the exact scan gives that row
      for (const auto& e : a) {
        if (e.row == h.row) EXPECT_EQ(0, std::memcmp(&e.cosine, &h.cosine, sizeof(float)));
      }
    }
  }
  EXPECT_GE(same, 990u);  // recall@10 >= 0.99 with beam 64
}

TEST(WordIndex, StartGivesWhatSearchGivesBitForBit) {
  constexpr size_t kDim = 24, kN = 900;
  auto rows = Clustered(kN, kDim, 6, 4);
  for (size_t limit : {size_t{4096}, size_t{100}}) {
    auto w = Make(kDim, limit);
    ASSERT_TRUE(w->Add(rows.data(), kN).ok());
    auto qs = Near(rows, kDim, 30, 2);
    for (size_t qi = 0; qi < 30; ++qi) {
      const float* q = qs.data() + qi * kDim;
      auto started = w->Start(q, 7);
      ASSERT_TRUE(started.ok());
      ASSERT_TRUE(started.value()->Wait().ok());
      EXPECT_TRUE(started.value()->done());
      ExpectSameHits(started.value()->hits(), SearchOf(*w, q, 7));
    }
  }
}

TEST(WordIndex, BadArgumentsAreRefusedAndChangeNothing) {
  WordIndexOptions o;
  EXPECT_EQ(WordIndex::Create(o).status().code(), Code::kInvalidArgument);  // dim 0
  o.dim = 4;
  o.ef = 0;
  EXPECT_EQ(WordIndex::Create(o).status().code(), Code::kInvalidArgument);
  auto w = Make(4);
  const float good[8] = {1, 0, 0, 0, 0, 1, 0, 0};
  ASSERT_TRUE(w->Add(good, 2).ok());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float bad_rows[8] = {1, 0, 0, 0, 0, nan, 0, 0};
  EXPECT_EQ(w->Add(bad_rows, 2).code(), Code::kInvalidArgument);
  EXPECT_EQ(w->size(), 2u);  // nothing added
  std::vector<WordHit> out;
  const float q[4] = {1, 0, 0, 0};
  EXPECT_EQ(w->Search(q, 0, &out).code(), Code::kInvalidArgument);
  const float qnan[4] = {nan, 0, 0, 0};
  EXPECT_EQ(w->Search(qnan, 3, &out).code(), Code::kInvalidArgument);
  const float qzero[4] = {0, 0, 0, 0};
  EXPECT_EQ(w->Search(qzero, 3, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(w->Start(qzero, 3).status().code(), Code::kInvalidArgument);
  const float qinf[4] = {std::numeric_limits<float>::infinity(), 0, 0, 0};
  EXPECT_EQ(w->Start(qinf, 3).status().code(), Code::kInvalidArgument);
}

TEST(WordIndex, AStartedSearchOutlivesItsIndex) {
  constexpr size_t kDim = 16;
  auto rows = Clustered(300, kDim, 4, 8);
  auto w = Make(kDim, 50);
  ASSERT_TRUE(w->Add(rows.data(), 300).ok());
  const auto want = SearchOf(*w, rows.data(), 5);
  auto started = w->Start(rows.data(), 5);
  ASSERT_TRUE(started.ok());
  w.reset();  // the search holds the table
  ASSERT_TRUE(started.value()->Wait().ok());
  ExpectSameHits(started.value()->hits(), want);
}

TEST(WordIndex, AddsWhileSearchesAreInFlight) {
  constexpr size_t kDim = 32, kN = 2400;
  auto rows = Clustered(kN, kDim, 12, 6);
  auto qs = Near(rows, kDim, 64, 1);
  auto w = Make(kDim, 600);  // crosses the limit (graph built) during the adds
  std::atomic<bool> adding{true};
  std::thread writer([&] {
    for (size_t at = 0; at < kN; at += 100) EXPECT_TRUE(w->Add(rows.data() + at * kDim, 100).ok());
    adding.store(false);
  });
  size_t searches = 0;
  while (adding.load() || searches < 64) {
    const float* q = qs.data() + (searches % 64) * kDim;
    const size_t before = w->size();
    auto started = w->Start(q, 8);
    std::vector<WordHit> inline_hits;
    ASSERT_TRUE(w->Search(q, 8, &inline_hits).ok());
    ASSERT_TRUE(started.ok());
    ASSERT_TRUE(started.value()->Wait().ok());
    const size_t after = w->size();
    const std::vector<WordHit>* both[2] = {&started.value()->hits(), &inline_hits};
    for (const auto* hits : both) {
      EXPECT_LE(hits->size(), 8u);
      EXPECT_GE(hits->size(), std::min<size_t>(8, before));
      for (const auto& h : *hits) EXPECT_LT(h.row, after);
    }
    ++searches;
  }
  writer.join();
  EXPECT_EQ(w->size(), kN);
  EXPECT_TRUE(w->has_graph());
}

}  // namespace
}  // namespace chitta::recall
