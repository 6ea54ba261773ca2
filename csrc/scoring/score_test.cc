// csrc/scoring/score_test.cc
#include "scoring/score.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace chitta::scoring {
namespace {

// One candidate scored by hand from the formula in score.h.
TEST(Score, MatchesHandComputedValue) {
  const int64_t now = 10LL * 86'400'000;  // day 10
  const double fused[] = {0.03}, cosine[] = {0.5}, conf[] = {0.8}, strength[] = {1.0};
  const double kind[] = {1.1}, supp[] = {0.6};
  const int64_t created[] = {0}, offsets[] = {0, 2}, access[] = {0, now - 4000};
  const uint8_t staged[] = {1};
  const int64_t tier[] = {2};
  Candidates c{1, fused, cosine, created, offsets, access, 2, conf, strength, staged, tier, kind, supp};
  Weights w;
  double out = 0;
  ASSERT_TRUE(ScoreCandidates(c, 0.06, now, w, &out).ok());
  const double total = std::pow(10.0 * 86'400.0, -0.5) + std::pow(4.0, -0.5);
  const double act = 1.0 / (1.0 + std::exp(-(std::log(total) + 2.0)));
  const double fresh = std::pow(0.99, 10.0);
  const double want = (1.0 * 0.5 + 0.02 * 0.5) * (1.0 - 0.05 - 0.10 + 0.05 * act + 0.10 * fresh) * 0.9 *
                      1.0 * 0.8 * (1.0 / 1.5) * 1.1 * 0.6;
  EXPECT_NEAR(out, want, 1e-15);
}

TEST(Score, EdgeValues) {
  const int64_t now = 1000;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double fused[] = {0.01, 0.0}, cosine[] = {nan, -0.3}, conf[] = {0.0, 1.0};
  const double strength[] = {-1.0, 3.0}, kind[] = {1.0, 1.0}, supp[] = {1.0, 1.0};
  const int64_t created[] = {5000, 0}, offsets[] = {0, 0, 1}, access[] = {999};
  const uint8_t staged[] = {0, 0};
  const int64_t tier[] = {-3, 0};
  Candidates c{2, fused, cosine, created, offsets, access, 1, conf, strength, staged, tier, kind, supp};
  double out[2];
  ASSERT_TRUE(ScoreCandidates(c, 0.0, now, Weights{}, out).ok());
  EXPECT_EQ(out[0], 0.0);  // best 0 -> fused 0, no vector -> similarity 0, strength clamped to 0
  // fused 0, cosine clamped to 0: relevance 0 whatever the multipliers.
  EXPECT_EQ(out[1], 0.0);
}

TEST(Score, RefusesBadOffsets) {
  const double one[] = {1.0};
  const int64_t zero[] = {0};
  const uint8_t no[] = {0};
  const int64_t past[] = {0, 3}, start[] = {1, 1};
  Candidates c{1, one, one, zero, past, zero, 1, one, one, no, zero, one, one};
  double out;
  EXPECT_EQ(ScoreCandidates(c, 1.0, 0, Weights{}, &out).code(), Code::kInvalidArgument);
  c.access_offsets = start;
  EXPECT_EQ(ScoreCandidates(c, 1.0, 0, Weights{}, &out).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace chitta::scoring
