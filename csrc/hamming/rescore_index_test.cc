// csrc/hamming/rescore_index_test.cc
// RescoreIndex: rescoring equals exact cosine over the Hamming candidate set;
// the mean rule; bad input changes nothing.
#include "hamming/rescore_index.h"

#include "hamming/binarize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace chitta::hamming {
namespace {

std::vector<float> Gaussian(size_t n, size_t dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n * dim);
  for (auto& x : v) x = normal(rng);
  return v;
}

std::unique_ptr<RescoreIndex> Make(size_t dim, size_t candidates) {
  auto r = RescoreIndex::Create(dim, candidates);
  EXPECT_TRUE(r.ok());
  return std::move(r.value());
}

TEST(RescoreIndex, DefaultCandidatesRule) {
  EXPECT_EQ(RescoreIndex::DefaultCandidates(0), 400u);
  EXPECT_EQ(RescoreIndex::DefaultCandidates(400000), 400u);
  EXPECT_EQ(RescoreIndex::DefaultCandidates(400001), 401u);
  EXPECT_EQ(RescoreIndex::DefaultCandidates(1000000), 1000u);
}

TEST(RescoreIndex, RescoresCandidatesByExactCosine) {
  const size_t dim = 96;
  const size_t n = 2000;
  auto index = Make(dim, 50);
  auto data = Gaussian(n, dim, 1);
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = 3 * i + 1;
  ASSERT_TRUE(index->Add(ids.data(), data.data(), n).ok());
  auto queries = Gaussian(5, dim, 2);
  const size_t k = 10;
  std::vector<uint64_t> got(5 * k);
  std::vector<float> score(5 * k);
  ASSERT_TRUE(index->Search(queries.data(), 5, k, 0, got.data(), score.data()).ok());
  for (size_t q = 0; q < 5; ++q) {
    std::vector<uint64_t> cand;
    ASSERT_TRUE(index->CandidateIds(queries.data() + q * dim, 0, &cand).ok());
    ASSERT_EQ(cand.size(), 50u);
    // Exact cosine in double over the candidate set.
    std::vector<std::pair<double, uint64_t>> ref;
    const float* qv = queries.data() + q * dim;
    for (uint64_t id : cand) {
      const float* v = data.data() + ((id - 1) / 3) * dim;
      double dot = 0, nq = 0, nv = 0;
      for (size_t i = 0; i < dim; ++i) {
        dot += double(qv[i]) * v[i];
        nq += double(qv[i]) * qv[i];
        nv += double(v[i]) * v[i];
      }
      ref.emplace_back(-dot / std::sqrt(nq * nv), id);
    }
    std::sort(ref.begin(), ref.end());
    for (size_t j = 0; j < k; ++j) {
      EXPECT_EQ(got[q * k + j], ref[j].second);
      EXPECT_NEAR(score[q * k + j], -ref[j].first, 1e-5);
    }
  }
}

TEST(RescoreIndex, MeanComesFromFirstBatchAndIsFixed) {
  const size_t dim = 8;
  auto index = Make(dim, 0);
  std::vector<float> mean;
  EXPECT_FALSE(index->GetMean(&mean));
  const float v[16] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0};
  const uint64_t ids[2] = {1, 2};
  ASSERT_TRUE(index->Add(ids, v, 2).ok());
  ASSERT_TRUE(index->GetMean(&mean));
  EXPECT_FLOAT_EQ(mean[0], 0.5f);
  EXPECT_FLOAT_EQ(mean[1], 0.5f);  // of the normalised vectors
  EXPECT_EQ(index->SetMean(v).code(), Code::kInvalidArgument);
}

TEST(RescoreIndex, ZeroVectorLeavesIndexUnchanged) {
  auto index = Make(4, 0);
  const float v[8] = {1, 2, 3, 4, 0, 0, 0, 0};
  const uint64_t ids[2] = {1, 2};
  EXPECT_EQ(index->Add(ids, v, 2).code(), Code::kInvalidArgument);
  EXPECT_EQ(index->size(), 0u);
  std::vector<float> mean;
  EXPECT_FALSE(index->GetMean(&mean));
}

TEST(RescoreIndex, NanQueryIsInvalid) {
  auto index = Make(2, 0);
  const float v[2] = {1, 2};
  const uint64_t id = 1;
  ASSERT_TRUE(index->Add(&id, v, 1).ok());
  const float q[2] = {std::nanf(""), 1};
  uint64_t out;
  float s;
  EXPECT_EQ(index->Search(q, 1, 1, 0, &out, &s).code(), Code::kInvalidArgument);
}

TEST(RescoreIndex, ShortResultIsPadded) {
  auto index = Make(2, 0);
  const float v[2] = {1, 2};
  const uint64_t id = 1;
  ASSERT_TRUE(index->Add(&id, v, 1).ok());
  uint64_t out[3];
  float s[3];
  ASSERT_TRUE(index->Search(v, 1, 3, 0, out, s).ok());
  EXPECT_EQ(out[0], 1u);
  EXPECT_NEAR(s[0], 1.0f, 1e-6);
  EXPECT_EQ(out[1], kPadId);
  EXPECT_TRUE(std::isinf(s[2]) && s[2] < 0);
}

// Codes adopted from a checkpoint search exactly like the codes the index makes.
TEST(RescoreIndex, AddCodedEqualsAddOfTheSameUnitRows) {
  const size_t dim = 100;  // not a multiple of 64: the last word has padding bits
  const size_t n = 1500;
  auto data = Gaussian(n, dim, 4);
  for (size_t r = 0; r < n; ++r) {  // unit rows, float as the organ stores them
    double sq = 0;
    for (size_t i = 0; i < dim; ++i) sq += double{data[r * dim + i]} * data[r * dim + i];
    for (size_t i = 0; i < dim; ++i) data[r * dim + i] = static_cast<float>(data[r * dim + i] / std::sqrt(sq));
  }
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = 7 * i + 2;
  auto built = Make(dim, 60);
  ASSERT_TRUE(built->Add(ids.data(), data.data(), n).ok());
  std::vector<float> mean;
  ASSERT_TRUE(built->GetMean(&mean));
  std::vector<uint64_t> codes(n * 2);
  ASSERT_TRUE(Binarize(data.data(), n, dim, mean.data(), codes.data()).ok());
  auto adopted = Make(dim, 60);
  EXPECT_FALSE(adopted->AddCoded(ids.data(), data.data(), codes.data(), n).ok());  // no mean yet
  ASSERT_TRUE(adopted->SetMean(mean.data()).ok());
  ASSERT_TRUE(adopted->AddCoded(ids.data(), data.data(), codes.data(), n).ok());
  auto queries = Gaussian(8, dim, 5);
  std::vector<uint64_t> a(8 * 10), b(8 * 10);
  std::vector<float> sa(8 * 10), sb(8 * 10);
  ASSERT_TRUE(built->Search(queries.data(), 8, 10, 0, a.data(), sa.data()).ok());
  ASSERT_TRUE(adopted->Search(queries.data(), 8, 10, 0, b.data(), sb.data()).ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(sa, sb);
}

TEST(RescoreIndex, AddCodedRefusesStrayBitsNonFiniteRowsAndKnownIds) {
  const size_t dim = 100;
  auto index = Make(dim, 0);
  std::vector<float> mean(dim, 0.0f), row(dim, 0.1f);
  ASSERT_TRUE(index->SetMean(mean.data()).ok());
  uint64_t id = 5;
  std::vector<uint64_t> code = {1, uint64_t{1} << 40};  // bit 104 of a 100-d code
  EXPECT_EQ(index->AddCoded(&id, row.data(), code.data(), 1).code(), Code::kInvalidArgument);
  code[1] = 1;
  row[3] = std::nanf("");
  EXPECT_EQ(index->AddCoded(&id, row.data(), code.data(), 1).code(), Code::kInvalidArgument);
  row[3] = 0.1f;
  ASSERT_TRUE(index->AddCoded(&id, row.data(), code.data(), 1).ok());
  EXPECT_EQ(index->AddCoded(&id, row.data(), code.data(), 1).code(), Code::kInvalidArgument);
  EXPECT_EQ(index->size(), 1u);
}

TEST(RescoreIndex, ExternalRowsSearchLikeAnOwnCopy) {
  const size_t dim = 100, n = 1200;
  auto data = Gaussian(n, dim, 6);
  for (size_t r = 0; r < n; ++r) {
    double sq = 0;
    for (size_t i = 0; i < dim; ++i) sq += double{data[r * dim + i]} * data[r * dim + i];
    for (size_t i = 0; i < dim; ++i) data[r * dim + i] = static_cast<float>(data[r * dim + i] / std::sqrt(sq));
  }
  std::vector<uint64_t> ids(n);
  std::vector<int64_t> refs(n);
  std::vector<float> copy(n * dim);  // the rows in slot order, as an own-copy index holds them
  for (size_t i = 0; i < n; ++i) {
    ids[i] = 3 * i + 1;
    refs[i] = static_cast<int64_t>((i * 7) % n);  // a permutation: rows need not follow slots
    std::copy_n(data.begin() + refs[i] * static_cast<int64_t>(dim), dim, copy.begin() + static_cast<int64_t>(i * dim));
  }
  std::vector<float> mean(dim, 0.0f);
  std::vector<uint64_t> codes(n * 2);
  ASSERT_TRUE(Binarize(copy.data(), n, dim, mean.data(), codes.data()).ok());
  auto own = Make(dim, 50);
  ASSERT_TRUE(own->SetMean(mean.data()).ok());
  ASSERT_TRUE(own->AddCoded(ids.data(), copy.data(), codes.data(), n).ok());
  auto made = RescoreIndex::Create(dim, 50, true);
  ASSERT_TRUE(made.ok());
  auto ext = std::move(made.value());
  EXPECT_FALSE(ext->AddRefs(ids.data(), refs.data(), codes.data(), n).ok());  // no mean yet
  ASSERT_TRUE(ext->SetMean(mean.data()).ok());
  EXPECT_FALSE(ext->AddCoded(ids.data(), copy.data(), codes.data(), n).ok());  // not its kind
  ASSERT_TRUE(ext->AddRefs(ids.data(), refs.data(), codes.data(), n).ok());
  std::vector<uint64_t> gone(ids.begin(), ids.begin() + 400);  // a third: the store compacts
  ASSERT_TRUE(own->Remove(gone.data(), gone.size()).ok());
  ASSERT_TRUE(ext->Remove(gone.data(), gone.size()).ok());
  auto queries = Gaussian(5, dim, 7);
  std::vector<uint64_t> a(5 * 10), b(5 * 10);
  std::vector<float> sa(5 * 10), sb(5 * 10);
  ASSERT_TRUE(own->Search(queries.data(), 5, 10, 0, a.data(), sa.data()).ok());
  EXPECT_FALSE(ext->Search(queries.data(), 5, 10, 0, b.data(), sb.data()).ok());  // no matrix
  ASSERT_TRUE(ext->Search(queries.data(), 5, 10, 0, b.data(), sb.data(), data.data(), n).ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(sa, sb);
  EXPECT_EQ(ext->Search(queries.data(), 5, 10, n, b.data(), sb.data(), data.data(), 10).code(),
            Code::kInvalidArgument);  // candidates whose rows lie past a 10-row matrix
  EXPECT_LT(ext->MemoryBytes() + (n - 400) * (dim * 4 - 8), own->MemoryBytes() + 1);
}

}  // namespace
}  // namespace chitta::hamming
