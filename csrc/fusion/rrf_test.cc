// csrc/fusion/rrf_test.cc
#include "fusion/rrf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

namespace chitta::fusion {
namespace {

TEST(Rrf, MatchesFormulaOnRandomLists) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 50; ++trial) {
    const size_t n_lists = 1 + rng() % 4;
    std::vector<std::vector<uint64_t>> data(n_lists);
    std::vector<RankedList> lists;
    std::vector<double> w;
    for (auto& d : data) {
      const size_t len = rng() % 30;
      for (size_t i = 0; i < len; ++i) d.push_back(rng() % 40);
      if (rng() % 4 == 0) d.push_back(kPadId);
      lists.push_back({d.data(), d.size()});
      w.push_back((rng() % 100) / 25.0);
    }
    FusedResult r;
    ASSERT_TRUE(RrfFuse(lists, w, 60, 0, true, &r).ok());
    std::map<uint64_t, double> want;
    for (size_t li = 0; li < n_lists; ++li) {
      std::map<uint64_t, bool> seen;
      for (size_t p = 0; p < data[li].size(); ++p) {
        const uint64_t id = data[li][p];
        if (id == kPadId || seen[id]) continue;
        seen[id] = true;
        want[id] += w[li] / (60.0 + p + 1);
      }
    }
    ASSERT_EQ(r.ids.size(), want.size());
    for (size_t i = 0; i < r.ids.size(); ++i) {
      EXPECT_NEAR(r.scores[i], want[r.ids[i]], 1e-12);
      if (i > 0) EXPECT_GE(r.scores[i - 1], r.scores[i]);
      for (size_t li = 0; li < n_lists; ++li) {
        const int32_t rank = r.ranks[i * n_lists + li];
        if (rank > 0) EXPECT_EQ(data[li][rank - 1], r.ids[i]);
      }
    }
  }
}

TEST(Rrf, TiesBreakByBestRankThenId) {
  const uint64_t a[] = {7, 3};
  const uint64_t b[] = {3, 7};
  const uint64_t c[] = {9, 5};
  FusedResult r;
  // 7 and 3 tie on score and best rank (1): smaller id first. 9 ties with 5 on
  // nothing: 9 ranks 1, 5 ranks 2.
  ASSERT_TRUE(RrfFuse({{a, 2}, {b, 2}}, {}, 60, 0, false, &r).ok());
  EXPECT_EQ(r.ids, (std::vector<uint64_t>{3, 7}));
  ASSERT_TRUE(RrfFuse({{c, 2}}, {}, 0, 0, false, &r).ok());
  EXPECT_EQ(r.ids, (std::vector<uint64_t>{9, 5}));
  EXPECT_DOUBLE_EQ(r.scores[0], 1.0);
}

TEST(Rrf, LimitKeepsBest) {
  const uint64_t a[] = {1, 2, 3, 4};
  FusedResult r;
  ASSERT_TRUE(RrfFuse({{a, 4}}, {}, 60, 2, true, &r).ok());
  EXPECT_EQ(r.ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(r.ranks, (std::vector<int32_t>{1, 2}));
}

TEST(Rrf, RejectsNegativeK) {
  FusedResult r;
  EXPECT_EQ(RrfFuse({}, {}, -1, 0, false, &r).code(), Code::kInvalidArgument);
}

TEST(Rrf, RejectsBadWeights) {
  const uint64_t a[] = {1};
  FusedResult r;
  EXPECT_EQ(RrfFuse({{a, 1}}, {-0.5}, 60, 0, false, &r).code(), Code::kInvalidArgument);
  EXPECT_EQ(RrfFuse({{a, 1}}, {NAN}, 60, 0, false, &r).code(), Code::kInvalidArgument);
  EXPECT_EQ(RrfFuse({{a, 1}}, {1, 1}, 60, 0, false, &r).code(), Code::kInvalidArgument);
}

TEST(Rrf, EmptyInputGivesEmptyOutput) {
  FusedResult r;
  ASSERT_TRUE(RrfFuse({}, {}, 60, 0, true, &r).ok());
  EXPECT_TRUE(r.ids.empty());
}

}  // namespace
}  // namespace chitta::fusion
