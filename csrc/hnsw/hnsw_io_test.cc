#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "hnsw/hnsw.h"
#include "hnsw/hnsw_format.h"
#include "hnsw/test_util.h"
#include "util/crc32c.h"

namespace chitta::hnsw {
namespace {

constexpr size_t kDim = 16;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "chitta_hnsw_io_" + name + ".hnsw";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Re-seals the trailer CRC so a test reaches the checks behind it.
void FixCrc(std::string* bytes) {
  const uint32_t crc = crc32c::Value(bytes->data() + 8, bytes->size() - 12);
  std::memcpy(&(*bytes)[bytes->size() - 4], &crc, 4);
}

class HnswIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = testing::Clustered(400, kDim, 8, 3);
    ids_ = testing::Iota(400, 10);
    Options o;
    o.dim = kDim;
    o.ef_construction = 60;
    index_ = std::make_unique<HnswIndex>(o);
    ASSERT_TRUE(index_->Add(ids_.data(), data_.data(), 400, 1).ok());
    std::vector<uint64_t> gone = {ids_[1], ids_[50]};
    ASSERT_TRUE(index_->MarkDeleted(gone.data(), 2).ok());
    path_ = TempPath(::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(index_->Save(path_).ok());
    bytes_ = ReadAll(path_);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  Code LoadCode(const std::string& bytes) {
    WriteAll(path_, bytes);
    return HnswIndex::Load(path_).status().code();
  }

  std::vector<float> data_;
  std::vector<uint64_t> ids_;
  std::unique_ptr<HnswIndex> index_;
  std::string path_;
  std::string bytes_;
};

TEST_F(HnswIoTest, RoundTripGivesIdenticalResults) {
  auto loaded = HnswIndex::Load(path_);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const HnswIndex& b = *loaded.value();
  EXPECT_EQ(index_->size(), b.size());
  EXPECT_EQ(index_->node_count(), b.node_count());
  EXPECT_FALSE(b.Contains(ids_[1]));
  auto q = testing::Near(data_, kDim, 30, 4);
  std::vector<uint64_t> ia(300), ib(300);
  std::vector<float> da(300), db(300);
  ASSERT_TRUE(index_->Search(q.data(), 30, 10, 32, nullptr, 0, false, 1, ia.data(), da.data()).ok());
  ASSERT_TRUE(b.Search(q.data(), 30, 10, 32, nullptr, 0, false, 1, ib.data(), db.data()).ok());
  EXPECT_EQ(ia, ib);
  EXPECT_EQ(da, db);
  // Saving the loaded index reproduces the bytes.
  ASSERT_TRUE(b.Save(path_).ok());
  EXPECT_EQ(bytes_, ReadAll(path_));
}

TEST_F(HnswIoTest, EmptyIndexRoundTrips) {
  Options o;
  o.dim = 4;
  HnswIndex empty(o);
  ASSERT_TRUE(empty.Save(path_).ok());
  auto loaded = HnswIndex::Load(path_);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(0u, loaded.value()->size());
}

TEST_F(HnswIoTest, FlippedByteAnywhereIsDetected) {
  for (size_t off = 0; off < bytes_.size(); off += 97) {
    std::string bad = bytes_;
    bad[off] ^= 0x20;
    const Code code = LoadCode(bad);
    EXPECT_TRUE(code == Code::kCrcMismatch || code == Code::kCorruption ||
                code == Code::kUnsupported)
        << "offset " << off;
  }
}

TEST_F(HnswIoTest, FlippedBodyByteIsChecksumMismatch) {
  std::string bad = bytes_;
  bad[bytes_.size() / 2] ^= 0x01;
  EXPECT_EQ(Code::kCrcMismatch, LoadCode(bad));
}

TEST_F(HnswIoTest, TruncationIsCorruption) {
  for (size_t keep : {size_t{0}, size_t{5}, size_t{40}, size_t{64}, bytes_.size() / 2,
                      bytes_.size() - 1}) {
    EXPECT_EQ(Code::kCorruption, LoadCode(bytes_.substr(0, keep))) << keep;
  }
}

TEST_F(HnswIoTest, WrongMagicIsCorruption) {
  std::string bad = bytes_;
  bad[0] = 'X';
  EXPECT_EQ(Code::kCorruption, LoadCode(bad));
}

TEST_F(HnswIoTest, FutureMajorVersionIsUnsupported) {
  std::string bad = bytes_;
  const uint16_t major = format::kMajor + 1;
  std::memcpy(&bad[format::kOffMajor], &major, 2);
  FixCrc(&bad);
  EXPECT_EQ(Code::kUnsupported, LoadCode(bad));
}

TEST_F(HnswIoTest, HugeNodeCountIsRejectedBeforeAllocating) {
  std::string bad = bytes_;
  const uint64_t n = uint64_t{1} << 40;
  std::memcpy(&bad[format::kOffNodeCount], &n, 8);
  FixCrc(&bad);
  EXPECT_EQ(Code::kCorruption, LoadCode(bad));
}

TEST_F(HnswIoTest, OutOfRangeLinkIsCorruption) {
  // First level-0 link of node 0: after header, labels, levels, flags, vectors.
  const size_t n = index_->node_count();
  const size_t off = format::kHeaderSize + n * (8 + 1 + 1 + 4 * kDim) + 4;
  std::string bad = bytes_;
  const uint32_t link = 1u << 30;
  std::memcpy(&bad[off], &link, 4);
  FixCrc(&bad);
  EXPECT_EQ(Code::kCorruption, LoadCode(bad));
}

TEST_F(HnswIoTest, UnknownFlagIsCorruption) {
  const size_t n = index_->node_count();
  std::string bad = bytes_;
  bad[format::kHeaderSize + n * 9] = 0x40;
  FixCrc(&bad);
  EXPECT_EQ(Code::kCorruption, LoadCode(bad));
}

TEST_F(HnswIoTest, MissingFileIsIOError) {
  EXPECT_EQ(Code::kIOError, HnswIndex::Load(path_ + ".nope").status().code());
}

}  // namespace
}  // namespace chitta::hnsw
