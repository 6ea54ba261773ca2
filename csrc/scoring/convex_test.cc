// csrc/scoring/convex_test.cc
// ConvexFused by hand: the keyword term, min-max cosines (NaN = no vector,
// all equal = full weight), the expansion term, ranks past a list's end and
// absent lanes ignored. tests/unit/recall/test_recall_convex_native.py compares it
// with the Python reference bit for bit on random inputs.
#include "scoring/convex.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace chitta::scoring {
namespace {

TEST(ConvexFused, HandComputedTerms) {
  // rows x lists (bm25, dense, expansion); kept rows 0, 1, 3
  const std::vector<int32_t> ranks = {1, 1, 0,   //
                                      2, 0, 2,   //
                                      0, 2, 1,   //
                                      9, 3, 1};  // bm25 rank 9: past the 2-long list
  const std::vector<uint32_t> keep = {0, 1, 3};
  const std::vector<float> kw = {4.0f, 2.0f}, ex = {3.0f, 1.5f};
  const std::vector<double> cos = {0.5, NAN, 0.1};
  ConvexLane k{0, kw.data(), kw.size(), 0.6};
  ConvexLane e{2, ex.data(), ex.size(), 0.2};
  std::vector<double> out;
  ConvexFused(ranks.data(), 3, keep.data(), keep.size(), cos.data(), k, e, &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_DOUBLE_EQ(out[0], 0.6 * 1.0 + 0.4 * 1.0);          // best bm25, highest cosine
  EXPECT_DOUBLE_EQ(out[1], 0.6 * 0.5 + 0.2 * 0.5);          // no vector: no cosine term
  EXPECT_DOUBLE_EQ(out[2], 0.4 * 0.0 + 0.2 * 1.0);          // lowest cosine; bm25 rank ignored
}

TEST(ConvexFused, EqualCosinesCountFullyAndAbsentLanesAddNothing) {
  const std::vector<int32_t> ranks = {1, 1, 2, 2};
  const std::vector<uint32_t> keep = {0, 1};
  const std::vector<double> cos = {0.3, 0.3};
  const std::vector<float> kw = {2.0f, 1.0f};
  std::vector<double> out;
  ConvexFused(ranks.data(), 2, keep.data(), 2, cos.data(), ConvexLane{-1, kw.data(), 2, 0.25},
              ConvexLane{}, &out);
  EXPECT_DOUBLE_EQ(out[0], 0.75);
  EXPECT_DOUBLE_EQ(out[1], 0.75);
  ConvexFused(ranks.data(), 2, keep.data(), 0, nullptr, ConvexLane{0, kw.data(), 2, 0.5}, ConvexLane{},
              &out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace chitta::scoring
