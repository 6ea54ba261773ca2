#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
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
  const uint16_t major = format::kMajorRefs + 1;  // 2 is the format with references
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

// Format 2.0: live vectors written as references to the caller's rows.
class HnswRefsTest : public HnswIoTest {
 protected:
  // The caller's matrix: rows in reverse id order (so row != node), one row
  // (id 10 + 7) differing from what the graph holds (a stale node), id 10 + 9
  // absent.
  void SetUp() override {
    HnswIoTest::SetUp();
    const size_t n = ids_.size();
    for (size_t i = 0; i < n; ++i) {
      if (i == 9) continue;
      ref_ids_.push_back(ids_[i]);
      ref_rows_.push_back(static_cast<int64_t>(n - 1 - i));
    }
    matrix_.assign(n * kDim, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(&matrix_[(n - 1 - i) * kDim], &data_[i * kDim], kDim * sizeof(float));
    }
    matrix_[(n - 1 - 7) * kDim] += 0.5f;
    ASSERT_TRUE(index_->Save(path_, Source()).ok());
    refs_bytes_ = ReadAll(path_);
  }
  const RowSource* Source() {
    source_ = std::make_unique<RowSource>(ref_ids_.data(), ref_rows_.data(), ref_ids_.size(),
                                          matrix_.data(), ids_.size(), kDim);
    return source_.get();
  }
  std::vector<uint64_t> ref_ids_;
  std::vector<int64_t> ref_rows_;
  std::vector<float> matrix_;
  std::unique_ptr<RowSource> source_;
  std::string refs_bytes_;
};

TEST_F(HnswRefsTest, StoresOnlyTheVectorsItCannotRefer) {
  uint16_t major = 0;
  uint64_t refs = 0;
  std::memcpy(&major, &refs_bytes_[format::kOffMajor], 2);
  std::memcpy(&refs, &refs_bytes_[format::kOffRefCount], 8);
  EXPECT_EQ(2, major);
  // 400 nodes: 2 deleted, id 17 stale, id 19 without a row store their vectors.
  EXPECT_EQ(396u, refs);
  EXPECT_EQ(bytes_.size() - 396 * kDim * 4 + 16, refs_bytes_.size());
  const size_t flags_off = format::kHeaderSizeRefs + 400 * 9;
  EXPECT_EQ(format::kFlagDeleted, refs_bytes_[flags_off + 1]);
  EXPECT_EQ(0, refs_bytes_[flags_off + 7]);
  EXPECT_EQ(0, refs_bytes_[flags_off + 9]);
  EXPECT_EQ(format::kFlagRefVector, refs_bytes_[flags_off + 8]);
}

TEST_F(HnswRefsTest, LoadsToTheSameGraphAsTheStoredFormat) {
  auto loaded = HnswIndex::Load(path_, Source());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const HnswIndex& b = *loaded.value();
  auto q = testing::Near(data_, kDim, 30, 4);
  std::vector<uint64_t> ia(300), ib(300);
  std::vector<float> da(300), db(300);
  ASSERT_TRUE(index_->Search(q.data(), 30, 10, 32, nullptr, 0, false, 1, ia.data(), da.data()).ok());
  ASSERT_TRUE(b.Search(q.data(), 30, 10, 32, nullptr, 0, false, 1, ib.data(), db.data()).ok());
  EXPECT_EQ(ia, ib);
  EXPECT_EQ(da, db);
  // The same graph in format 1.0, byte for byte.
  ASSERT_TRUE(b.Save(path_).ok());
  EXPECT_EQ(bytes_, ReadAll(path_));
}

TEST_F(HnswRefsTest, RefusesMissingOrChangedRows) {
  EXPECT_EQ(Code::kCorruption, HnswIndex::Load(path_).status().code());  // no rows given
  matrix_[(ids_.size() - 1 - 3) * kDim + 2] += 1e-3f;  // a referenced row changed
  EXPECT_EQ(Code::kCorruption, HnswIndex::Load(path_, Source()).status().code());
  matrix_[(ids_.size() - 1 - 3) * kDim + 2] -= 1e-3f;
  ASSERT_TRUE(HnswIndex::Load(path_, Source()).ok());
  ref_rows_[2] = -1;  // a referenced id without a row
  EXPECT_EQ(Code::kCorruption, HnswIndex::Load(path_, Source()).status().code());
}

TEST_F(HnswRefsTest, FlippedByteAnywhereIsDetected) {
  for (size_t off = 0; off < refs_bytes_.size(); off += 97) {
    std::string bad = refs_bytes_;
    bad[off] = static_cast<char>(bad[off] ^ 0x40);
    WriteAll(path_, bad);
    EXPECT_FALSE(HnswIndex::Load(path_, Source()).ok()) << "offset " << off;
  }
}

TEST_F(HnswRefsTest, TruncatedFileIsCorruption) {
  WriteAll(path_, refs_bytes_.substr(0, refs_bytes_.size() - 4 * kDim));
  EXPECT_EQ(Code::kCorruption, HnswIndex::Load(path_, Source()).status().code());
}

}  // namespace
}  // namespace chitta::hnsw
