// csrc/recall/word_scan_test.cc
// The quantized exact scan equals the plain f32 scan row for row and bit for
// bit (random, clustered, tied, zero, non-unit and low-dimensional rows);
// the VNNI int8 kernel equals the generic one.
#include "recall/word_scan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "hnsw/test_util.h"
#include "recall/word_index.h"

namespace chitta::recall {
namespace {

std::vector<float> Gaussian(size_t n, size_t dim, uint64_t seed, bool unit) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> v(n * dim);
  for (float& x : v) x = g(rng);
  if (unit) {
    for (size_t r = 0; r < n; ++r) {
      double s = 0;
      for (size_t d = 0; d < dim; ++d) s += double(v[r * dim + d]) * v[r * dim + d];
      for (size_t d = 0; d < dim; ++d) v[r * dim + d] = float(v[r * dim + d] / std::sqrt(s));
    }
  }
  return v;
}

std::vector<float> Unit(const float* q, size_t dim) {
  double s = 0;
  for (size_t d = 0; d < dim; ++d) s += double(q[d]) * q[d];
  std::vector<float> out(dim);
  for (size_t d = 0; d < dim; ++d) out[d] = float(q[d] / std::sqrt(s));
  return out;
}

// Every query: ExactTopK == ScanTopK for several k.
void ExpectSameAsScan(const std::vector<float>& rows, size_t dim, const std::vector<float>& queries) {
  const size_t n = rows.size() / dim;
  QuantRows quant(dim);
  quant.Append(rows.data(), n / 3);  // appended in pieces, as adds come
  quant.Append(rows.data() + (n / 3) * dim, n - n / 3);
  ASSERT_EQ(quant.size(), n);
  const hnsw::DotFn dot = hnsw::ChosenDot();
  for (size_t qi = 0; qi < queries.size() / dim; ++qi) {
    const auto q = Unit(queries.data() + qi * dim, dim);
    for (size_t k : {size_t{1}, size_t{5}, size_t{10}, size_t{37}, n + 3}) {
      std::vector<WordHit> a, b;
      ScanTopK(rows.data(), n, dim, dot, q.data(), k, &a);
      ExactTopK(quant, rows.data(), n, dot, q.data(), k, &b);
      ASSERT_EQ(a.size(), b.size());
      for (size_t j = 0; j < a.size(); ++j) {
        ASSERT_EQ(a[j].row, b[j].row) << "query " << qi << " k " << k << " position " << j;
        ASSERT_EQ(0, std::memcmp(&a[j].cosine, &b[j].cosine, sizeof(float)));
      }
    }
  }
}

TEST(WordScan, RandomUnitRowsGiveThePlainScansAnswer) {
  ExpectSameAsScan(Gaussian(3000, 384, 1, true), 384, Gaussian(40, 384, 2, false));
}

TEST(WordScan, ClusteredRowsAndNearQueriesGiveThePlainScansAnswer) {
  auto rows = hnsw::testing::Clustered(2000, 96, 10, 3, 0.1f);
  ExpectSameAsScan(rows, 96, hnsw::testing::Near(rows, 96, 40, 4, 0.05f));
}

TEST(WordScan, TiedZeroAndRepeatedRowsGoToTheSmallerRow) {
  auto rows = Gaussian(300, 40, 5, true);
  std::vector<float> all;
  for (int copy = 0; copy < 3; ++copy) all.insert(all.end(), rows.begin(), rows.end());
  all.insert(all.end(), 40 * 20, 0.0f);  // zero rows: cosine 0
  ExpectSameAsScan(all, 40, Gaussian(20, 40, 6, false));
}

TEST(WordScan, NonUnitAndLowDimensionalRowsGiveThePlainScansAnswer) {
  auto big = Gaussian(800, 64, 7, false);
  for (size_t i = 0; i < big.size(); ++i) big[i] *= (i % 3 == 0) ? 100.0f : 0.01f;
  ExpectSameAsScan(big, 64, Gaussian(20, 64, 8, false));
  ExpectSameAsScan(Gaussian(900, 2, 9, true), 2, Gaussian(20, 2, 10, false));
  ExpectSameAsScan(Gaussian(900, 3, 11, false), 3, Gaussian(20, 3, 12, false));
}

// Each SIMD kernel against the generic one, on every stride the lanes use and
// the extremes of both operands (query bytes up to 127, codes +-127: the widest
// pair sums vpmaddubsw must hold without saturating).
void ExpectKernelEqualsGeneric(Dot8RowsFn kernel) {
  std::mt19937_64 rng(13);
  for (size_t stride : {size_t{64}, size_t{128}, size_t{384}, size_t{448}, size_t{1024}}) {
    for (size_t n : {size_t{1}, size_t{4}, size_t{7}, size_t{30}}) {
      for (int fill = 0; fill < 3; ++fill) {
        std::vector<uint8_t> qu(stride);
        std::vector<int8_t> c(stride * n);
        for (auto& x : qu) {
          x = fill == 0 ? static_cast<uint8_t>(rng() % (kQueryOffset + kQueryLevel + 1))
                        : static_cast<uint8_t>(kQueryOffset + kQueryLevel);
        }
        for (auto& x : c) {
          x = fill == 0 ? static_cast<int8_t>(static_cast<int>(rng() % 255) - 127)
                        : static_cast<int8_t>(fill == 1 ? -127 : 127);
        }
        std::vector<int32_t> a(n), b(n);
        kernel(qu.data(), c.data(), stride, n, a.data());
        Dot8RowsGeneric(qu.data(), c.data(), stride, n, b.data());
        EXPECT_EQ(a, b) << "stride " << stride << " n " << n << " fill " << fill;
      }
    }
  }
}

TEST(WordScan, TheVnniKernelEqualsTheGenericOne) {
  if (!HasAvx512Vnni()) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  ExpectKernelEqualsGeneric(&Dot8RowsVnni);
}

TEST(WordScan, TheAvx2KernelEqualsTheGenericOne) {
  if (!HasDot8Avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  ExpectKernelEqualsGeneric(&Dot8RowsAvx2);
}

}  // namespace
}  // namespace chitta::recall
