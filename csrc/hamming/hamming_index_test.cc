// csrc/hamming/hamming_index_test.cc
// HammingIndex: add/remove/search against a model, all-or-nothing errors,
// the code file (round trip and one test per kind of damage), binarize.
#include "hamming/hamming_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hamming/binarize.h"
#include "hamming/store_format.h"
#include "util/crc32c.h"

namespace chitta::hamming {
namespace {

std::unique_ptr<HammingIndex> Make(uint64_t bits) {
  auto r = HammingIndex::Create(bits);
  EXPECT_TRUE(r.ok());
  return std::move(r.value());
}

TEST(HammingIndex, RejectsBadBits) {
  EXPECT_EQ(HammingIndex::Create(0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(HammingIndex::Create(100).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(HammingIndex::Create(65536 + 64).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(HammingIndex::Create(192).ok());
}

TEST(HammingIndex, RandomOpsMatchModel) {
  std::mt19937_64 rng(11);
  auto index = Make(128);
  std::vector<std::pair<uint64_t, std::vector<uint64_t>>> model;  // insertion order
  uint64_t next_id = 1;
  for (int step = 0; step < 300; ++step) {
    const int op = static_cast<int>(rng() % 3);
    if (op == 0 || model.empty()) {
      const size_t n = 1 + rng() % 20;
      std::vector<uint64_t> ids;
      std::vector<uint64_t> codes;
      for (size_t i = 0; i < n; ++i) {
        ids.push_back(next_id++);
        std::vector<uint64_t> c = {rng() & 0xF, rng() & 0x3};  // few distinct codes: many ties
        codes.insert(codes.end(), c.begin(), c.end());
        model.emplace_back(ids.back(), c);
      }
      ASSERT_TRUE(index->Add(ids.data(), codes.data(), n).ok());
    } else if (op == 1) {
      const size_t at = rng() % model.size();
      const uint64_t id = model[at].first;
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(at));
      ASSERT_TRUE(index->Remove(&id, 1).ok());
    } else {
      const uint64_t q[2] = {rng() & 0xF, rng() & 0x3};
      const size_t k = 1 + rng() % 12;
      std::vector<std::pair<uint32_t, size_t>> order;
      for (size_t i = 0; i < model.size(); ++i) {
        const uint32_t d = static_cast<uint32_t>(__builtin_popcountll(model[i].second[0] ^ q[0]) +
                                                 __builtin_popcountll(model[i].second[1] ^ q[1]));
        order.emplace_back(d, i);
      }
      std::sort(order.begin(), order.end());
      std::vector<uint64_t> ids(k);
      std::vector<uint32_t> dist(k);
      ASSERT_TRUE(index->Search(q, 1, k, ids.data(), dist.data()).ok());
      for (size_t j = 0; j < k; ++j) {
        if (j < order.size()) {
          ASSERT_EQ(ids[j], model[order[j].second].first) << "step " << step;
          ASSERT_EQ(dist[j], order[j].first);
        } else {
          ASSERT_EQ(ids[j], kPadId);
          ASSERT_EQ(dist[j], 129u);
        }
      }
    }
    ASSERT_EQ(index->size(), model.size());
  }
}

TEST(HammingIndex, DuplicateIdLeavesIndexUnchanged) {
  auto index = Make(64);
  const uint64_t ids[2] = {1, 2};
  const uint64_t codes[2] = {3, 4};
  ASSERT_TRUE(index->Add(ids, codes, 2).ok());
  const uint64_t again[2] = {5, 2};
  EXPECT_EQ(index->Add(again, codes, 2).code(), Code::kInvalidArgument);
  const uint64_t twice[2] = {7, 7};
  EXPECT_EQ(index->Add(twice, codes, 2).code(), Code::kInvalidArgument);
  EXPECT_EQ(index->size(), 2u);
  EXPECT_FALSE(index->Contains(5));
  EXPECT_FALSE(index->Contains(7));
}

TEST(HammingIndex, PadIdIsReserved) {
  auto index = Make(64);
  const uint64_t id = kPadId;
  const uint64_t code = 0;
  EXPECT_EQ(index->Add(&id, &code, 1).code(), Code::kInvalidArgument);
  EXPECT_EQ(index->size(), 0u);
}

TEST(HammingIndex, RemoveUnknownIdLeavesIndexUnchanged) {
  auto index = Make(64);
  const uint64_t ids[3] = {1, 2, 3};
  const uint64_t codes[3] = {0, 1, 3};
  ASSERT_TRUE(index->Add(ids, codes, 3).ok());
  const uint64_t gone[2] = {1, 9};
  EXPECT_EQ(index->Remove(gone, 2).code(), Code::kNotFound);
  const uint64_t twice[2] = {1, 1};
  EXPECT_EQ(index->Remove(twice, 2).code(), Code::kInvalidArgument);
  EXPECT_EQ(index->size(), 3u);
  EXPECT_TRUE(index->Contains(1));
}

TEST(HammingIndex, ReAddedIdGoesLastInTieOrder) {
  auto index = Make(64);
  const uint64_t ids[3] = {10, 20, 30};
  const uint64_t codes[3] = {0, 0, 0};
  ASSERT_TRUE(index->Add(ids, codes, 3).ok());
  ASSERT_TRUE(index->Remove(ids, 1).ok());
  ASSERT_TRUE(index->Add(ids, codes, 1).ok());
  EXPECT_EQ(index->Ids(), (std::vector<uint64_t>{20, 30, 10}));
  uint64_t out[3];
  uint32_t dist[3];
  ASSERT_TRUE(index->Search(codes, 1, 3, out, dist).ok());
  EXPECT_EQ(std::vector<uint64_t>(out, out + 3), (std::vector<uint64_t>{20, 30, 10}));
}

TEST(HammingIndex, ZeroKIsInvalid) {
  auto index = Make(64);
  const uint64_t q = 0;
  uint64_t id;
  uint32_t d;
  EXPECT_EQ(index->Search(&q, 1, 0, &id, &d).code(), Code::kInvalidArgument);
}

// ---- the code file ----------------------------------------------------------

class HammingFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "hamming_file_test_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".bin";
    index_ = Make(192);
    std::mt19937_64 rng(5);
    std::vector<uint64_t> ids;
    std::vector<uint64_t> codes;
    for (uint64_t i = 0; i < 50; ++i) {
      ids.push_back(1000 + i);
      for (int w = 0; w < 3; ++w) codes.push_back(rng());
    }
    ASSERT_TRUE(index_->Add(ids.data(), codes.data(), ids.size()).ok());
    ASSERT_TRUE(index_->Remove(ids.data() + 7, 3).ok());
    ASSERT_TRUE(index_->Save(path_).ok());
    bytes_ = ReadAll();
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string ReadAll() {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void WriteAll(const std::string& bytes) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // Rewrites the footer so that only the intended damage remains.
  void FixCrc(std::string* bytes) {
    const size_t body = bytes->size() - 4;
    const uint32_t crc = crc32c::Value(bytes->data(), body);
    std::memcpy(bytes->data() + body, &crc, 4);
  }
  Code LoadCode() { return HammingIndex::Load(path_).status().code(); }

  std::string path_;
  std::string bytes_;
  std::unique_ptr<HammingIndex> index_;
};

TEST_F(HammingFile, RoundTripKeepsIdsOrderAndCodes) {
  EXPECT_EQ(bytes_.size(), 28u + 47u * (8 + 24));
  auto loaded = HammingIndex::Load(path_);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded.value()->bits(), 192u);
  EXPECT_EQ(loaded.value()->Ids(), index_->Ids());
  const uint64_t q[3] = {1, 2, 3};
  uint64_t a[47], b[47];
  uint32_t da[47], db[47];
  ASSERT_TRUE(index_->Search(q, 1, 47, a, da).ok());
  ASSERT_TRUE(loaded.value()->Search(q, 1, 47, b, db).ok());
  EXPECT_EQ(std::vector<uint64_t>(a, a + 47), std::vector<uint64_t>(b, b + 47));
  EXPECT_EQ(std::vector<uint32_t>(da, da + 47), std::vector<uint32_t>(db, db + 47));
}

TEST_F(HammingFile, FlippedByteIsCrcMismatch) {
  bytes_[100] ^= 0x10;
  WriteAll(bytes_);
  EXPECT_EQ(LoadCode(), Code::kCrcMismatch);
}

TEST_F(HammingFile, TruncatedFileIsCorruption) {
  WriteAll(bytes_.substr(0, bytes_.size() - 9));
  EXPECT_EQ(LoadCode(), Code::kCorruption);
}

TEST_F(HammingFile, TooShortForHeaderIsCorruption) {
  WriteAll(bytes_.substr(0, 20));
  EXPECT_EQ(LoadCode(), Code::kCorruption);
}

TEST_F(HammingFile, BadMagicIsCorruption) {
  bytes_[0] = 'X';
  FixCrc(&bytes_);
  WriteAll(bytes_);
  EXPECT_EQ(LoadCode(), Code::kCorruption);
}

TEST_F(HammingFile, HugeCountIsCorruptionNotAllocation) {
  const uint64_t huge = uint64_t{1} << 60;
  std::memcpy(bytes_.data() + format::kCountOffset, &huge, 8);
  FixCrc(&bytes_);
  WriteAll(bytes_);
  EXPECT_EQ(LoadCode(), Code::kCorruption);
}

TEST_F(HammingFile, ZeroWordsIsCorruption) {
  const uint32_t zero = 0;
  std::memcpy(bytes_.data() + format::kWordsOffset, &zero, 4);
  FixCrc(&bytes_);
  WriteAll(bytes_);
  EXPECT_EQ(LoadCode(), Code::kCorruption);
}

TEST_F(HammingFile, NewerMajorIsUnsupported) {
  const uint16_t major = 2;
  std::memcpy(bytes_.data() + format::kMajorOffset, &major, 2);
  FixCrc(&bytes_);
  WriteAll(bytes_);
  EXPECT_EQ(LoadCode(), Code::kUnsupported);
}

TEST_F(HammingFile, RepeatedIdIsCorruption) {
  // Copy record 0's id over record 1's.
  std::memcpy(bytes_.data() + 24 + 32, bytes_.data() + 24, 8);
  FixCrc(&bytes_);
  WriteAll(bytes_);
  EXPECT_EQ(LoadCode(), Code::kCorruption);
}

TEST_F(HammingFile, MissingFileIsIOError) {
  std::remove(path_.c_str());
  EXPECT_EQ(LoadCode(), Code::kIOError);
}

// ---- binarize -----------------------------------------------------------------

TEST(HammingBinarize, SignBitsLittleEndianWithZeroPadding) {
  const size_t dim = 70;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> v(2 * dim);
  std::vector<float> mean(dim);
  for (auto& x : v) x = normal(rng);
  for (auto& x : mean) x = 0.1f * normal(rng);
  std::vector<uint64_t> out(2 * WordsForDim(dim), ~uint64_t{0});
  ASSERT_TRUE(Binarize(v.data(), 2, dim, mean.data(), out.data()).ok());
  for (size_t r = 0; r < 2; ++r) {
    for (size_t i = 0; i < 128; ++i) {
      const bool want = i < dim && v[r * dim + i] - mean[i] > 0.0f;
      EXPECT_EQ(((out[r * 2 + i / 64] >> (i % 64)) & 1) != 0, want) << r << " " << i;
    }
  }
}

TEST(HammingBinarize, NanIsInvalidAndWritesNothing) {
  const float v[2] = {1.0f, std::nanf("")};
  const float mean[2] = {0, 0};
  uint64_t out = 77;
  EXPECT_EQ(Binarize(v, 1, 2, mean, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(out, 77u);
}

}  // namespace
}  // namespace chitta::hamming
