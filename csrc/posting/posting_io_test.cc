// csrc/posting/posting_io_test.cc
// Save/Load round trip and the reader's answer to each kind of damage (FORMAT.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>

#include "posting/posting_format.h"
#include "posting/posting_index.h"
#include "posting/posting_test_util.h"
#include "util/crc32c.h"

namespace chitta::posting {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "posting_io_" + std::to_string(::getpid()) + "_" + name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

class PostingIo : public ::testing::Test {
 protected:
  void SetUp() override {
    Options o;
    o.n_features = 64;
    o.active = 6;
    o.compact_fraction = 1.0;
    index_ = std::move(PostingIndex::Create(o).value());
    std::mt19937_64 rng(9);
    for (uint64_t id = 0; id < 50; ++id) {
      auto f = testing::RandomCode(rng, 64, 6);
      auto a = testing::RandomActivations(rng, 6);
      uint64_t real_id = id * 1000003;
      ASSERT_TRUE(index_->Add(&real_id, 1, f.data(), a.data()).ok());
    }
    std::vector<uint64_t> gone = {0, 7 * 1000003};
    ASSERT_TRUE(index_->Remove(gone.data(), 2).ok());
    path_ = TempPath(::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(index_->Save(path_).ok());
    bytes_ = ReadAll(path_);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  Code LoadCode(const std::string& bytes) {
    WriteAll(path_, bytes);
    return PostingIndex::Load(path_).status().code();
  }
  // Re-fixes the trailer so damage behind a valid CRC can be tested.
  static std::string FixCrc(std::string b) {
    const uint32_t crc = crc32c::Value(b.data(), b.size() - 4);
    std::memcpy(&b[b.size() - 4], &crc, 4);
    return b;
  }

  std::unique_ptr<PostingIndex> index_;
  std::string path_;
  std::string bytes_;
};

TEST_F(PostingIo, RoundTripKeepsIdsRowsAndRanks) {
  auto loaded = PostingIndex::Load(path_);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const PostingIndex& back = *loaded.value();
  EXPECT_EQ(index_->LiveIds(), back.LiveIds());
  EXPECT_FALSE(back.unit_activations());
  std::mt19937_64 rng(10);
  for (int t = 0; t < 20; ++t) {
    auto q = testing::RandomCode(rng, 64, 6);
    std::vector<uint64_t> a(10), b(10);
    std::vector<uint32_t> ac(10), bc(10);
    ASSERT_TRUE(index_->Search(q.data(), 1, 6, 10, nullptr, a.data(), ac.data()).ok());
    ASSERT_TRUE(back.Search(q.data(), 1, 6, 10, nullptr, b.data(), bc.data()).ok());
    EXPECT_EQ(a, b);
    EXPECT_EQ(ac, bc);
  }
}

TEST_F(PostingIo, FlippedByteIsCrcMismatch) {
  for (size_t pos : {size_t{0} + 40, bytes_.size() / 2, bytes_.size() - 5}) {
    std::string b = bytes_;
    b[pos] = static_cast<char>(b[pos] ^ 0x10);
    EXPECT_EQ(Code::kCrcMismatch, LoadCode(b)) << "byte " << pos;
  }
}

TEST_F(PostingIo, TruncatedFileIsCorruption) {
  EXPECT_EQ(Code::kCorruption, LoadCode(bytes_.substr(0, bytes_.size() - 1)));
  EXPECT_EQ(Code::kCorruption, LoadCode(bytes_.substr(0, 10)));
}

TEST_F(PostingIo, BadMagicIsCorruption) {
  std::string b = bytes_;
  b[0] = 'X';
  EXPECT_EQ(Code::kCorruption, LoadCode(b));
}

TEST_F(PostingIo, NewerMajorVersionIsUnsupported) {
  std::string b = bytes_;
  b[format::kOffMajor] = 2;
  EXPECT_EQ(Code::kUnsupported, LoadCode(FixCrc(b)));
}

TEST_F(PostingIo, UnknownFlagIsUnsupported) {
  std::string b = bytes_;
  b[format::kOffFlags] = static_cast<char>(b[format::kOffFlags] | 0x2);
  EXPECT_EQ(Code::kUnsupported, LoadCode(FixCrc(b)));
}

TEST_F(PostingIo, HugeCountIsCorruptionWithoutAllocating) {
  std::string b = bytes_;
  const uint64_t huge = ~uint64_t{0} / 2;
  std::memcpy(&b[format::kOffCount], &huge, 8);
  EXPECT_EQ(Code::kCorruption, LoadCode(FixCrc(b)));
}

TEST_F(PostingIo, UnsortedRowUnderValidCrcIsCorruption) {
  std::string b = bytes_;
  // First record's first two feature ids swapped.
  const size_t f0 = format::kHeaderBytes + 8;
  std::string tmp = b.substr(f0, 4);
  b.replace(f0, 4, b.substr(f0 + 4, 4));
  b.replace(f0 + 4, 4, tmp);
  EXPECT_EQ(Code::kCorruption, LoadCode(FixCrc(b)));
}

TEST_F(PostingIo, DuplicateIdUnderValidCrcIsCorruption) {
  std::string b = bytes_;
  const size_t record = 8 + 6 * 4 * 2;
  b.replace(format::kHeaderBytes + record, 8, b.substr(format::kHeaderBytes, 8));
  EXPECT_EQ(Code::kCorruption, LoadCode(FixCrc(b)));
}

TEST_F(PostingIo, FeatureAboveNFeaturesUnderValidCrcIsCorruption) {
  std::string b = bytes_;
  const uint32_t big = 64;  // n_features is 64: the last feature of record 0 out of range
  std::memcpy(&b[format::kHeaderBytes + 8 + 5 * 4], &big, 4);
  EXPECT_EQ(Code::kCorruption, LoadCode(FixCrc(b)));
}

TEST_F(PostingIo, NonFiniteActivationUnderValidCrcIsCorruption) {
  std::string b = bytes_;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(&b[format::kHeaderBytes + 8 + 6 * 4 + 8], &nan, 4);
  EXPECT_EQ(Code::kCorruption, LoadCode(FixCrc(b)));
}

TEST_F(PostingIo, PadIdUnderValidCrcIsCorruption) {
  std::string b = bytes_;
  const uint64_t pad = kPadId;
  std::memcpy(&b[format::kHeaderBytes], &pad, 8);
  EXPECT_EQ(Code::kCorruption, LoadCode(FixCrc(b)));
}

TEST_F(PostingIo, LoadedListsAreExactlySizedAndSearchLikeTheOriginal) {
  auto loaded = PostingIndex::Load(path_);
  ASSERT_TRUE(loaded.ok());
  EXPECT_LE(loaded.value()->MemoryBytes(), index_->MemoryBytes());
  std::vector<uint32_t> q = {1, 5, 9, 17, 33, 60};
  std::vector<uint64_t> a_ids(10), b_ids(10);
  std::vector<uint32_t> a_counts(10), b_counts(10);
  ASSERT_TRUE(index_->Search(q.data(), 1, q.size(), 10, nullptr, a_ids.data(), a_counts.data(), 1).ok());
  ASSERT_TRUE(loaded.value()->Search(q.data(), 1, q.size(), 10, nullptr, b_ids.data(), b_counts.data(), 1).ok());
  EXPECT_EQ(a_ids, b_ids);
  EXPECT_EQ(a_counts, b_counts);
}

TEST_F(PostingIo, MissingFileIsIOError) {
  EXPECT_EQ(Code::kIOError, PostingIndex::Load(path_ + ".does-not-exist").status().code());
}

}  // namespace
}  // namespace chitta::posting
