// csrc/util/unit_rows_test.cc
// RowNorm against an exactly rounded long double sum; UnitRows against
// RowNorm and float division, with the packing of rows it skips.
#include "util/unit_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace chitta::util {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 3.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = g(rng);
  return v;
}

TEST(UnitRows, NormMatchesALongDoubleSumToTheFloat) {
  for (size_t dim : {1u, 7u, 8u, 9u, 64u, 384u, 385u}) {
    auto v = Random(dim, static_cast<uint32_t>(dim));
    long double sum = 0;
    for (float x : v) sum += static_cast<long double>(x) * x;
    const float want = static_cast<float>(std::sqrt(sum));
    const float got = RowNorm(v.data(), dim);
    EXPECT_LE(std::fabs(got - want), std::numeric_limits<float>::epsilon() * want) << dim;
  }
  const float three_four[] = {3.0f, 4.0f};
  EXPECT_EQ(5.0f, RowNorm(three_four, 2));
  EXPECT_EQ(0.0f, RowNorm(three_four, 0));
}

TEST(UnitRows, DividesByTheNormAndPacksTheRowsItKeeps) {
  const size_t dim = 19, rows = 6;
  auto src = Random(rows * dim, 7);
  for (size_t i = 0; i < dim; ++i) src[1 * dim + i] = 0.0f;                 // zero norm: skipped
  src[3 * dim + 4] = std::numeric_limits<float>::infinity();                  // infinite norm: skipped
  src[4 * dim + 2] = std::numeric_limits<float>::quiet_NaN();                 // NaN norm: skipped
  std::vector<float> dst(rows * dim, -1.0f), norms(rows);
  ASSERT_EQ(3u, UnitRows(src.data(), rows, dim, dst.data(), norms.data()));
  const size_t kept[] = {0, 2, 5};
  for (size_t k = 0; k < 3; ++k) {
    const float* row = src.data() + kept[k] * dim;
    EXPECT_EQ(RowNorm(row, dim), norms[kept[k]]);
    for (size_t i = 0; i < dim; ++i) EXPECT_EQ(row[i] / norms[kept[k]], dst[k * dim + i]);
  }
  EXPECT_EQ(0.0f, norms[1]);
  EXPECT_TRUE(std::isinf(norms[3]));
  EXPECT_TRUE(std::isnan(norms[4]));
  for (size_t i = 3 * dim; i < rows * dim; ++i) EXPECT_EQ(-1.0f, dst[i]);  // untouched past the kept rows
}

TEST(UnitRows, ARowsNormDoesNotDependOnItsNeighbours) {
  const size_t dim = 384;
  auto src = Random(50 * dim, 11);
  std::vector<float> dst(src.size()), norms(50);
  UnitRows(src.data(), 50, dim, dst.data(), norms.data());
  for (size_t r = 0; r < 50; ++r) {
    std::vector<float> alone(src.begin() + r * dim, src.begin() + (r + 1) * dim), out(dim);
    float n;
    UnitRows(alone.data(), 1, dim, out.data(), &n);
    EXPECT_EQ(norms[r], n);
    for (size_t i = 0; i < dim; ++i) ASSERT_EQ(dst[r * dim + i], out[i]);
  }
}

}  // namespace
}  // namespace chitta::util
