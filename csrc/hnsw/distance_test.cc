#include "hnsw/distance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace chitta::hnsw {
namespace {

TEST(Distance, GenericMatchesNaiveSum) {
  std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> b = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_FLOAT_EQ(165.0f, DotGeneric(a.data(), b.data(), a.size()));
}

TEST(Distance, Avx2AgreesWithGenericForEveryLengthUpTo70) {
  if (!HasAvx2Fma()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  std::mt19937_64 rng(3);
  std::normal_distribution<float> g;
  for (size_t dim = 0; dim <= 70; ++dim) {
    std::vector<float> a(dim);
    std::vector<float> b(dim);
    for (size_t i = 0; i < dim; ++i) a[i] = g(rng), b[i] = g(rng);
    double ref = 0;
    for (size_t i = 0; i < dim; ++i) ref += static_cast<double>(a[i]) * b[i];
    EXPECT_NEAR(ref, DotGeneric(a.data(), b.data(), dim), 1e-4 * (1 + dim)) << dim;
    EXPECT_NEAR(ref, DotAvx2(a.data(), b.data(), dim), 1e-4 * (1 + dim)) << dim;
  }
}

TEST(Distance, Avx512AgreesWithGenericForEveryLengthUpTo140) {
  if (!HasAvx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937_64 rng(4);
  std::normal_distribution<float> g;
  for (size_t dim = 0; dim <= 140; ++dim) {
    std::vector<float> a(dim);
    std::vector<float> b(dim);
    for (size_t i = 0; i < dim; ++i) a[i] = g(rng), b[i] = g(rng);
    double ref = 0;
    for (size_t i = 0; i < dim; ++i) ref += static_cast<double>(a[i]) * b[i];
    EXPECT_NEAR(ref, DotAvx512(a.data(), b.data(), dim), 1e-4 * (1 + dim)) << dim;
  }
}

TEST(Distance, ChosenKernelMatchesReported) {
  const std::string name = DistanceImplementation();
  const DotFn expect = name == "avx512" ? &DotAvx512 : name == "avx2" ? &DotAvx2 : &DotGeneric;
  EXPECT_EQ(expect, ChosenDot());
}

TEST(Distance, ParseMetricRejectsUnknownName) {
  Metric m;
  EXPECT_TRUE(ParseMetric("cosine", &m).ok());
  EXPECT_EQ(Metric::kCosine, m);
  EXPECT_TRUE(ParseMetric("ip", &m).ok());
  EXPECT_EQ(Metric::kInnerProduct, m);
  EXPECT_EQ(Code::kInvalidArgument, ParseMetric("l2", &m).code());
}

TEST(Distance, PrepareNormalisesForCosine) {
  float v[3] = {3, 0, 4};
  float out[3];
  ASSERT_TRUE(PrepareVector(Metric::kCosine, v, 3, out).ok());
  EXPECT_FLOAT_EQ(0.6f, out[0]);
  EXPECT_FLOAT_EQ(0.8f, out[2]);
  ASSERT_TRUE(PrepareVector(Metric::kInnerProduct, v, 3, out).ok());
  EXPECT_FLOAT_EQ(3.0f, out[0]);
}

TEST(Distance, PrepareRejectsNaN) {
  float v[2] = {1, std::numeric_limits<float>::quiet_NaN()};
  float out[2] = {7, 7};
  EXPECT_EQ(Code::kInvalidArgument, PrepareVector(Metric::kInnerProduct, v, 2, out).code());
  EXPECT_EQ(7.0f, out[0]);
}

TEST(Distance, PrepareRejectsInfinity) {
  float v[2] = {1, std::numeric_limits<float>::infinity()};
  float out[2];
  EXPECT_EQ(Code::kInvalidArgument, PrepareVector(Metric::kCosine, v, 2, out).code());
}

TEST(Distance, ZeroVectorRejectedForCosineOnly) {
  float v[2] = {0, 0};
  float out[2];
  EXPECT_EQ(Code::kInvalidArgument, PrepareVector(Metric::kCosine, v, 2, out).code());
  EXPECT_TRUE(PrepareVector(Metric::kInnerProduct, v, 2, out).ok());
}

TEST(Distance, HugeFiniteValuesNormaliseWithoutOverflow) {
  float v[2] = {3e38f, 3e38f};
  float out[2];
  ASSERT_TRUE(PrepareVector(Metric::kCosine, v, 2, out).ok());
  EXPECT_NEAR(std::sqrt(0.5), out[0], 1e-6);
}

TEST(Distance, CheckVectorsNamesTheBadRow) {
  std::vector<float> rows = {1, 0, 0, 0};
  Status st = CheckVectors(Metric::kCosine, rows.data(), 2, 2);
  EXPECT_EQ(Code::kInvalidArgument, st.code());
  EXPECT_NE(std::string::npos, st.message().find("vector 1"));
}

}  // namespace
}  // namespace chitta::hnsw
