#include "hnsw/hnsw.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <thread>
#include <vector>

#include "hnsw/brute_force.h"
#include "hnsw/test_util.h"

namespace chitta::hnsw {
namespace {

using testing::Answer;
using testing::Clustered;
using testing::Iota;
using testing::Recall;

constexpr size_t kDim = 32;
constexpr size_t kN = 1000;
constexpr size_t kQ = 50;
constexpr size_t kK = 10;

Options Opts(uint32_t efc = 64) {
  Options o;
  o.dim = kDim;
  o.ef_construction = efc;
  return o;
}

Answer SearchAll(const HnswIndex& index, const std::vector<float>& q, size_t k, size_t ef,
           const std::vector<uint64_t>* allowed = nullptr) {
  const size_t nq = q.size() / kDim;
  Answer a{std::vector<uint64_t>(nq * k), std::vector<float>(nq * k)};
  EXPECT_TRUE(index
                  .Search(q.data(), nq, k, ef, allowed ? allowed->data() : nullptr,
                          allowed ? allowed->size() : 0, allowed != nullptr, 1, a.ids.data(),
                          a.dist.data())
                  .ok());
  return a;
}

Answer Truth(const BruteForceIndex& bf, const std::vector<float>& q, size_t k,
             const std::vector<uint64_t>* allowed = nullptr) {
  const size_t nq = q.size() / kDim;
  Answer a{std::vector<uint64_t>(nq * k), std::vector<float>(nq * k)};
  EXPECT_TRUE(bf.Search(q.data(), nq, k, allowed ? allowed->data() : nullptr,
                        allowed ? allowed->size() : 0, allowed != nullptr, 1, a.ids.data(),
                        a.dist.data())
                  .ok());
  return a;
}

class HnswTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = Clustered(kN, kDim, 40, 1);
    queries_ = testing::Near(data_, kDim, kQ, 77);
    ids_ = Iota(kN, 1000);
    index_ = std::make_unique<HnswIndex>(Opts());
    ASSERT_TRUE(index_->Add(ids_.data(), data_.data(), kN, 2).ok());
    bf_ = std::make_unique<BruteForceIndex>(kDim, Metric::kCosine);
    ASSERT_TRUE(bf_->Add(ids_.data(), data_.data(), kN).ok());
  }
  std::vector<float> data_;
  std::vector<float> queries_;
  std::vector<uint64_t> ids_;
  std::unique_ptr<HnswIndex> index_;
  std::unique_ptr<BruteForceIndex> bf_;
};

TEST_F(HnswTest, RecallAtTenAgainstBruteForce) {
  EXPECT_TRUE(index_->CheckIntegrity().ok());
  const double r = Recall(Truth(*bf_, queries_, kK), SearchAll(*index_, queries_, kK, 64), kQ, kK);
  EXPECT_GE(r, 0.95);
}

TEST_F(HnswTest, MultithreadedBuildLeavesEveryNodeReachable) {
  HnswIndex index(Opts());
  ASSERT_TRUE(index.Add(ids_.data(), data_.data(), kN, 4).ok());
  EXPECT_TRUE(index.CheckIntegrity().ok());
  EXPECT_EQ(0u, index.UnreachableCount());
  EXPECT_EQ(0u, index_->UnreachableCount());
}

TEST_F(HnswTest, ResultsSortedAndDistancesMatchOracle) {
  Answer got = SearchAll(*index_, queries_, kK, 64);
  Answer truth = Truth(*bf_, queries_, kK);
  for (size_t q = 0; q < kQ; ++q) {
    for (size_t j = 1; j < kK; ++j) EXPECT_LE(got.dist[q * kK + j - 1], got.dist[q * kK + j]);
    EXPECT_NEAR(truth.dist[q * kK], got.dist[q * kK], 1e-5);  // nearest found
  }
}

TEST(Hnsw, ExactWhenEfCoversEveryNode) {
  const size_t n = 300;
  auto data = Clustered(n, kDim, 5, 9);
  auto ids = Iota(n);
  HnswIndex index(Opts(40));
  BruteForceIndex bf(kDim, Metric::kCosine);
  ASSERT_TRUE(index.Add(ids.data(), data.data(), n, 1).ok());
  ASSERT_TRUE(bf.Add(ids.data(), data.data(), n).ok());
  auto q = testing::Near(data, kDim, 20, 10);
  Answer got = SearchAll(index, q, kK, n);
  Answer truth = Truth(bf, q, kK);
  for (size_t i = 0; i < got.dist.size(); ++i) EXPECT_FLOAT_EQ(truth.dist[i], got.dist[i]);
}

TEST(Hnsw, SingleThreadBuildIsDeterministic) {
  auto data = Clustered(500, kDim, 10, 4);
  auto ids = Iota(500);
  HnswIndex a(Opts(50));
  HnswIndex b(Opts(50));
  ASSERT_TRUE(a.Add(ids.data(), data.data(), 500, 1).ok());
  ASSERT_TRUE(b.Add(ids.data(), data.data(), 500, 1).ok());
  auto q = Clustered(10, kDim, 10, 5);
  Answer ra = SearchAll(a, q, kK, 20);
  Answer rb = SearchAll(b, q, kK, 20);
  EXPECT_EQ(ra.ids, rb.ids);
  EXPECT_EQ(a.max_level(), b.max_level());
}

TEST_F(HnswTest, DeletedNodesNeverReturned) {
  std::vector<uint64_t> gone;
  for (size_t i = 0; i < kN; i += 3) gone.push_back(ids_[i]);
  ASSERT_TRUE(index_->MarkDeleted(gone.data(), gone.size()).ok());
  ASSERT_TRUE(bf_->MarkDeleted(gone.data(), gone.size()).ok());
  EXPECT_EQ(kN - gone.size(), index_->size());
  std::set<uint64_t> dead(gone.begin(), gone.end());
  Answer got = SearchAll(*index_, queries_, kK, 64);
  for (uint64_t id : got.ids) EXPECT_EQ(0u, dead.count(id));
  EXPECT_GE(Recall(Truth(*bf_, queries_, kK), got, kQ, kK), 0.95);
}

TEST_F(HnswTest, DeletedIdCanBeAddedAgain) {
  const uint64_t id = ids_[5];
  ASSERT_TRUE(index_->MarkDeleted(&id, 1).ok());
  EXPECT_FALSE(index_->Contains(id));
  std::vector<float> v(queries_.begin(), queries_.begin() + kDim);
  ASSERT_TRUE(index_->Add(&id, v.data(), 1, 1).ok());
  Answer got = SearchAll(*index_, v, 1, 64);
  EXPECT_EQ(id, got.ids[0]);
  EXPECT_NEAR(0.0f, got.dist[0], 1e-5);
}

TEST_F(HnswTest, FilterReturnsOnlyAllowedIds) {
  for (size_t every : {2, 7, 400}) {  // graph walk, widened walk, exact scan
    std::vector<uint64_t> allowed;
    for (size_t i = 0; i < kN; i += every) allowed.push_back(ids_[i]);
    allowed.push_back(123456789);  // unknown ids are ignored
    std::set<uint64_t> ok(allowed.begin(), allowed.end());
    Answer got = SearchAll(*index_, queries_, kK, 64, &allowed);
    for (uint64_t id : got.ids) EXPECT_TRUE(id == kNoId || ok.count(id)) << every;
    EXPECT_GE(Recall(Truth(*bf_, queries_, kK, &allowed), got, kQ, kK), 0.95) << every;
  }
}

TEST_F(HnswTest, EmptyFilterPadsEverything) {
  std::vector<uint64_t> allowed;
  Answer got = SearchAll(*index_, queries_, kK, 64, &allowed);
  for (uint64_t id : got.ids) EXPECT_EQ(kNoId, id);
}

TEST(Hnsw, MissingResultsArePaddedWithNoIdAndInfinity) {
  HnswIndex index(Opts());
  auto data = Clustered(3, kDim, 2, 2);
  auto ids = Iota(3);
  std::vector<float> q(data.begin(), data.begin() + kDim);
  Answer empty = SearchAll(index, q, 5, 10);
  EXPECT_EQ(kNoId, empty.ids[0]);
  ASSERT_TRUE(index.Add(ids.data(), data.data(), 3, 1).ok());
  Answer got = SearchAll(index, q, 5, 10);
  EXPECT_EQ(0u, got.ids[0]);
  EXPECT_EQ(kNoId, got.ids[3]);
  EXPECT_EQ(kNoId, got.ids[4]);
  EXPECT_TRUE(std::isinf(got.dist[4]));
}

TEST_F(HnswTest, ConcurrentSearchesMatchSequential) {
  Answer seq = SearchAll(*index_, queries_, kK, 64);
  std::vector<Answer> par(4);
  std::vector<std::thread> threads;
  for (auto& a : par) threads.emplace_back([&] { a = SearchAll(*index_, queries_, kK, 64); });
  for (auto& t : threads) t.join();
  for (auto& a : par) EXPECT_EQ(seq.ids, a.ids);
}

TEST_F(HnswTest, CloneIsIndependent) {
  auto copy = index_->Clone();
  const uint64_t id = ids_[0];
  ASSERT_TRUE(copy->MarkDeleted(&id, 1).ok());
  EXPECT_TRUE(index_->Contains(id));
  EXPECT_EQ(SearchAll(*index_, queries_, kK, 64).ids.size(), kQ * kK);
  EXPECT_TRUE(copy->CheckIntegrity().ok());
}

// ---- bad input: InvalidArgument / NotFound, index unchanged ----------------

class HnswBadInput : public HnswTest {
 protected:
  void ExpectUnchanged() {
    EXPECT_EQ(kN, index_->size());
    EXPECT_EQ(kN, index_->node_count());
    EXPECT_EQ(before_.ids, SearchAll(*index_, queries_, kK, 64).ids);
  }
  void SetUp() override {
    HnswTest::SetUp();
    before_ = SearchAll(*index_, queries_, kK, 64);
  }
  Answer before_;
};

TEST_F(HnswBadInput, DuplicateIdInBatchRejected) {
  std::vector<uint64_t> ids = {1, 1};
  EXPECT_EQ(Code::kInvalidArgument, index_->Add(ids.data(), data_.data(), 2, 1).code());
  ExpectUnchanged();
}

TEST_F(HnswBadInput, ExistingIdRejected) {
  std::vector<uint64_t> ids = {1, ids_[3]};
  EXPECT_EQ(Code::kInvalidArgument, index_->Add(ids.data(), data_.data(), 2, 1).code());
  ExpectUnchanged();
}

TEST_F(HnswBadInput, ReservedIdRejected) {
  const uint64_t id = kNoId;
  EXPECT_EQ(Code::kInvalidArgument, index_->Add(&id, data_.data(), 1, 1).code());
  ExpectUnchanged();
}

TEST_F(HnswBadInput, NaNVectorRejected) {
  std::vector<float> v(2 * kDim, 0.5f);
  v[kDim + 3] = std::numeric_limits<float>::quiet_NaN();
  std::vector<uint64_t> ids = {1, 2};
  EXPECT_EQ(Code::kInvalidArgument, index_->Add(ids.data(), v.data(), 2, 1).code());
  ExpectUnchanged();
}

TEST_F(HnswBadInput, ZeroVectorRejectedForCosine) {
  std::vector<float> v(kDim, 0.0f);
  const uint64_t id = 1;
  EXPECT_EQ(Code::kInvalidArgument, index_->Add(&id, v.data(), 1, 1).code());
  ExpectUnchanged();
}

TEST_F(HnswBadInput, UnknownIdOnDeleteIsNotFound) {
  std::vector<uint64_t> ids = {ids_[0], 99};
  EXPECT_EQ(Code::kNotFound, index_->MarkDeleted(ids.data(), 2).code());
  ExpectUnchanged();
}

TEST_F(HnswBadInput, DuplicateIdOnDeleteRejected) {
  std::vector<uint64_t> ids = {ids_[0], ids_[0]};
  EXPECT_EQ(Code::kInvalidArgument, index_->MarkDeleted(ids.data(), 2).code());
  ExpectUnchanged();
}

TEST_F(HnswBadInput, ZeroKRejected) {
  uint64_t id;
  float d;
  EXPECT_EQ(Code::kInvalidArgument,
            index_->Search(queries_.data(), 1, 0, 10, nullptr, 0, false, 1, &id, &d).code());
}

TEST_F(HnswBadInput, NaNQueryRejected) {
  std::vector<float> q(kDim, std::numeric_limits<float>::quiet_NaN());
  std::vector<uint64_t> ids(kK);
  std::vector<float> d(kK);
  EXPECT_EQ(Code::kInvalidArgument,
            index_->Search(q.data(), 1, kK, 10, nullptr, 0, false, 1, ids.data(), d.data()).code());
}

TEST(HnswOptions, BadParametersRejected) {
  Options o = Opts();
  o.dim = 0;
  EXPECT_EQ(Code::kInvalidArgument, HnswIndex::Create(o).status().code());
  o = Opts();
  o.M = 1;
  EXPECT_EQ(Code::kInvalidArgument, HnswIndex::Create(o).status().code());
  o = Opts();
  o.ef_construction = 0;
  EXPECT_EQ(Code::kInvalidArgument, HnswIndex::Create(o).status().code());
}

TEST(Hnsw, InnerProductMetricRanksByDot) {
  Options o = Opts(50);
  o.metric = Metric::kInnerProduct;
  o.dim = 2;
  HnswIndex index(o);
  std::vector<float> v = {1, 0, 3, 0, 0, 2};
  auto ids = Iota(3);
  ASSERT_TRUE(index.Add(ids.data(), v.data(), 3, 1).ok());
  float q[2] = {1, 0};
  uint64_t out[3];
  float d[3];
  ASSERT_TRUE(index.Search(q, 1, 3, 10, nullptr, 0, false, 1, out, d).ok());
  EXPECT_EQ(1u, out[0]);
  EXPECT_FLOAT_EQ(1.0f - 3.0f, d[0]);
  EXPECT_EQ(0u, out[1]);
}

}  // namespace
}  // namespace chitta::hnsw
