// csrc/posting/posting_errors_test.cc
// Every rejected call returns its code and leaves the index exactly as it was
// (same size, ids, tombstones and search results).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "posting/posting_index.h"

namespace chitta::posting {
namespace {

class PostingErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    Options o;
    o.n_features = 32;
    o.active = 4;
    o.compact_fraction = 1.0;
    auto r = PostingIndex::Create(o);
    ASSERT_TRUE(r.ok());
    index_ = std::move(r.value());
    std::vector<uint64_t> ids = {10, 11, 12};
    std::vector<uint32_t> rows = {0, 1, 2, 3, 1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_TRUE(index_->Add(ids.data(), 3, rows.data(), nullptr).ok());
    before_ = Snapshot();
  }

  std::vector<uint64_t> Snapshot() const {
    std::vector<uint64_t> s = index_->LiveIds();
    s.push_back(index_->num_tombstones());
    std::vector<uint32_t> q = {1, 2, 3, 5};
    std::vector<uint64_t> ids(5);
    std::vector<uint32_t> counts(5);
    EXPECT_TRUE(index_->Search(q.data(), 1, 4, 5, nullptr, ids.data(), counts.data()).ok());
    s.insert(s.end(), ids.begin(), ids.end());
    s.insert(s.end(), counts.begin(), counts.end());
    return s;
  }

  Code AddOne(uint64_t id, std::vector<uint32_t> row, const float* act = nullptr) {
    // A valid first row plus the one under test: nothing of the batch may land.
    std::vector<uint64_t> ids = {100, id};
    std::vector<uint32_t> rows = {20, 21, 22, 23};
    rows.insert(rows.end(), row.begin(), row.end());
    std::vector<float> acts(8, 1.0f);
    if (act) std::copy(act, act + 4, acts.begin() + 4);
    return index_->Add(ids.data(), 2, rows.data(), act ? acts.data() : nullptr).code();
  }

  void ExpectUnchanged() { EXPECT_EQ(before_, Snapshot()); }

  std::unique_ptr<PostingIndex> index_;
  std::vector<uint64_t> before_;
};

TEST_F(PostingErrors, AddDuplicateIdInBatch) {
  EXPECT_EQ(Code::kInvalidArgument, AddOne(100, {9, 10, 11, 12}));
  ExpectUnchanged();
}

TEST_F(PostingErrors, AddIdAlreadyPresent) {
  EXPECT_EQ(Code::kInvalidArgument, AddOne(11, {9, 10, 11, 12}));
  ExpectUnchanged();
}

TEST_F(PostingErrors, AddPadId) {
  EXPECT_EQ(Code::kInvalidArgument, AddOne(kPadId, {9, 10, 11, 12}));
  ExpectUnchanged();
}

TEST_F(PostingErrors, AddFeatureOutOfRange) {
  EXPECT_EQ(Code::kInvalidArgument, AddOne(200, {9, 10, 11, 32}));
  ExpectUnchanged();
}

TEST_F(PostingErrors, AddDuplicateFeatureInRow) {
  EXPECT_EQ(Code::kInvalidArgument, AddOne(200, {9, 10, 9, 12}));
  ExpectUnchanged();
}

TEST_F(PostingErrors, AddNanActivation) {
  const float act[4] = {1.0f, std::numeric_limits<float>::quiet_NaN(), 1.0f, 1.0f};
  EXPECT_EQ(Code::kInvalidArgument, AddOne(200, {9, 10, 11, 12}, act));
  ExpectUnchanged();
}

TEST_F(PostingErrors, AddInfiniteActivation) {
  const float act[4] = {1.0f, 1.0f, -std::numeric_limits<float>::infinity(), 1.0f};
  EXPECT_EQ(Code::kInvalidArgument, AddOne(200, {9, 10, 11, 12}, act));
  ExpectUnchanged();
  EXPECT_TRUE(index_->unit_activations());
}

TEST_F(PostingErrors, RemoveUnknownId) {
  std::vector<uint64_t> ids = {10, 99};
  EXPECT_EQ(Code::kNotFound, index_->Remove(ids.data(), 2).code());
  ExpectUnchanged();
}

TEST_F(PostingErrors, RemoveAlreadyRemovedId) {
  uint64_t id = 10;
  ASSERT_TRUE(index_->Remove(&id, 1).ok());
  before_ = Snapshot();
  EXPECT_EQ(Code::kNotFound, index_->Remove(&id, 1).code());
  ExpectUnchanged();
}

TEST_F(PostingErrors, RemoveDuplicateIdInBatch) {
  std::vector<uint64_t> ids = {10, 10};
  EXPECT_EQ(Code::kInvalidArgument, index_->Remove(ids.data(), 2).code());
  ExpectUnchanged();
}

TEST_F(PostingErrors, SearchRejectsZeroK) {
  std::vector<uint32_t> q = {1, 2, 3, 4};
  uint64_t id;
  uint32_t c;
  EXPECT_EQ(Code::kInvalidArgument, index_->Search(q.data(), 1, 4, 0, nullptr, &id, &c).code());
}

TEST_F(PostingErrors, SearchRejectsFeatureOutOfRange) {
  std::vector<uint32_t> q = {1, 2, 3, 40};
  std::vector<uint64_t> ids(2);
  std::vector<uint32_t> c(2);
  EXPECT_EQ(Code::kInvalidArgument, index_->Search(q.data(), 1, 4, 2, nullptr, ids.data(), c.data()).code());
}

TEST_F(PostingErrors, SearchRejectsRepeatedQueryFeature) {
  std::vector<uint32_t> q = {1, 2, 1, 4};
  std::vector<uint64_t> ids(2);
  std::vector<uint32_t> c(2);
  EXPECT_EQ(Code::kInvalidArgument, index_->Search(q.data(), 1, 4, 2, nullptr, ids.data(), c.data()).code());
}

TEST_F(PostingErrors, SearchRejectsEmptyQuery) {
  uint32_t q = 0;
  std::vector<uint64_t> ids(2);
  std::vector<uint32_t> c(2);
  EXPECT_EQ(Code::kInvalidArgument, index_->Search(&q, 1, 0, 2, nullptr, ids.data(), c.data()).code());
}

}  // namespace
}  // namespace chitta::posting
