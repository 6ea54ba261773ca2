// csrc/util/sidecar_file_test.cc
// The shared sidecar reader (sidecar_file.h), one test per failure mode, on
// files written here byte by byte (the CRC by a bitwise CRC-32C written here,
// independent of util/crc32c).
#include "util/sidecar_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace chitta::sidecar {
namespace {

constexpr char kMagic[8] = {'T', 'E', 'S', 'T', 'S', 'I', 'D', 'E'};

uint32_t BitwiseCrc32c(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

template <typename T>
void Put(std::vector<uint8_t>* b, size_t off, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) (*b)[off + i] = static_cast<uint8_t>(uint64_t(v) >> (8 * i));
}

Framing TestFraming(uint64_t crc_from = 0) {
  Framing f;
  f.kind = "test file";
  f.magic = kMagic;
  f.major = 3;
  f.header_bytes = 24;
  f.header_size_field = true;
  f.crc_from = crc_from;
  return f;
}

// magic, major 3, minor 1, header size 24, u64 count at 16; `count` records of
// 8 bytes; the CRC trailer over [crc_from, end).
std::vector<uint8_t> Good(uint64_t count, uint64_t crc_from = 0) {
  std::vector<uint8_t> b(24 + 8 * count + 4, 0);
  std::copy(kMagic, kMagic + 8, b.begin());
  Put<uint16_t>(&b, 8, 3);
  Put<uint16_t>(&b, 10, 1);
  Put<uint32_t>(&b, 12, 24);
  Put<uint64_t>(&b, 16, count);
  for (uint64_t i = 0; i < count; ++i) Put<uint64_t>(&b, 24 + 8 * i, 1000 + i);
  const size_t at = b.size() - 4;
  Put<uint32_t>(&b, at, BitwiseCrc32c(b.data() + crc_from, at - crc_from));
  return b;
}

class SidecarFile : public ::testing::Test {
 protected:
  std::string path_ = ::testing::TempDir() + "sidecar_test_" + std::to_string(::getpid()) + ".bin";
  void TearDown() override { std::remove(path_.c_str()); }
  void Write(const std::vector<uint8_t>& b) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    ASSERT_NE(nullptr, f);
    if (!b.empty()) ASSERT_EQ(b.size(), std::fwrite(b.data(), 1, b.size(), f));
    std::fclose(f);
  }
  Status Open(const Framing& framing, SidecarReader* r) { return SidecarReader::Open(path_, framing, r); }
};

TEST_F(SidecarFile, GoodFileReadsEveryFieldAndRecord) {
  Write(Good(5));
  SidecarReader r;
  ASSERT_TRUE(Open(TestFraming(), &r).ok());
  EXPECT_EQ(24u, r.header_bytes());
  EXPECT_EQ(1u, r.minor());
  EXPECT_EQ(5u, r.Get<uint64_t>(16));
  EXPECT_EQ(40u, r.body_bytes());
  EXPECT_TRUE(r.CheckCrc().ok());
  EXPECT_TRUE(r.CheckRecords(5, 8, 16).ok());
  Cursor c(r, r.header_bytes());
  for (uint64_t i = 0; i < 5; ++i) {
    const uint8_t* rec = c.Take(1, 8);
    ASSERT_NE(nullptr, rec);
    EXPECT_EQ(1000 + i, rec[0] | (uint64_t{rec[1]} << 8));
  }
  EXPECT_EQ(0u, c.left());
  EXPECT_EQ(nullptr, c.Take(1)) << "past the body";
}

TEST_F(SidecarFile, MissingFileIsIOError) {
  SidecarReader r;
  EXPECT_EQ(Code::kIOError, Open(TestFraming(), &r).code());
}

TEST_F(SidecarFile, BadMagicIsCorruption) {
  auto b = Good(2);
  b[3] ^= 1;
  Write(b);
  SidecarReader r;
  Status st = Open(TestFraming(), &r);
  EXPECT_EQ(Code::kCorruption, st.code());
  EXPECT_NE(std::string::npos, st.message().find("bad magic"));
}

TEST_F(SidecarFile, OtherMajorVersionIsUnsupported) {
  auto b = Good(2);
  Put<uint16_t>(&b, 8, 4);
  Write(b);
  SidecarReader r;
  Status st = Open(TestFraming(), &r);
  EXPECT_EQ(Code::kUnsupported, st.code());
  EXPECT_NE(std::string::npos, st.message().find("major version 4.1"));
}

TEST_F(SidecarFile, ShortFileIsCorruption) {
  const auto b = Good(0);
  for (size_t keep : {0, 5, 8, 20, 27}) {  // under the magic, and under header + trailer
    Write(std::vector<uint8_t>(b.begin(), b.begin() + keep));
    SidecarReader r;
    Status st = Open(TestFraming(), &r);
    EXPECT_EQ(Code::kCorruption, st.code()) << keep;
    EXPECT_NE(std::string::npos, st.message().find("too short")) << keep;
  }
}

TEST_F(SidecarFile, HeaderSizeOutOfRangeIsCorruption) {
  for (uint32_t field : {16u, 23u, 29u, 0xFFFFFFFFu}) {  // under the fixed header; past the trailer
    auto b = Good(0);
    Put<uint32_t>(&b, 12, field);
    Write(b);
    SidecarReader r;
    Status st = Open(TestFraming(), &r);
    EXPECT_EQ(Code::kCorruption, st.code()) << field;
    EXPECT_NE(std::string::npos, st.message().find("header size")) << field;
  }
}

TEST_F(SidecarFile, CrcMismatchIsReported) {
  auto b = Good(3);
  b[30] ^= 0x10;  // a record byte
  Write(b);
  SidecarReader r;
  ASSERT_TRUE(Open(TestFraming(), &r).ok());
  EXPECT_EQ(Code::kCrcMismatch, r.CheckCrc().code());
}

TEST_F(SidecarFile, CrcRangeStartsAtCrcFrom) {
  auto b = Good(3, 8);  // CRC over [8, end), as the HNSW file has it
  Write(b);
  SidecarReader r;
  ASSERT_TRUE(Open(TestFraming(8), &r).ok());
  EXPECT_TRUE(r.CheckCrc().ok());
  ASSERT_TRUE(Open(TestFraming(0), &r).ok());
  EXPECT_EQ(Code::kCrcMismatch, r.CheckCrc().code());
}

TEST_F(SidecarFile, CountNotMatchingTheSizeIsCorruption) {
  Write(Good(4));
  SidecarReader r;
  ASSERT_TRUE(Open(TestFraming(), &r).ok());
  for (uint64_t count : {3u, 5u}) {
    Status st = r.CheckRecords(count, 8, 16);
    EXPECT_EQ(Code::kCorruption, st.code()) << count;
    EXPECT_NE(std::string::npos, st.message().find("file size")) << count;
  }
  EXPECT_EQ(Code::kCorruption, r.CheckRecords(4, 0, 16).code()) << "zero-byte records";
}

TEST_F(SidecarFile, CountOverflowIsCorruptionNotAWrappedMatch) {
  Write(Good(4));
  SidecarReader r;
  ASSERT_TRUE(Open(TestFraming(), &r).ok());
  // 2^61 + 4 records of 8 bytes wrap to 32 bytes, the body's real size.
  EXPECT_EQ(Code::kCorruption, r.CheckRecords((uint64_t{1} << 61) + 4, 8, 16).code());
  SizeSum wrapped(24);
  wrapped.Add((uint64_t{1} << 61) + 4, 8).Add(1, 4);
  EXPECT_TRUE(wrapped.overflowed());
  EXPECT_EQ(Code::kCorruption, r.CheckSize(wrapped, 16).code());
  SizeSum exact(24);
  exact.Add(4, 8).Add(1, 4);
  EXPECT_TRUE(r.CheckSize(exact, 16).ok());
  Cursor c(r, 24);
  EXPECT_EQ(nullptr, c.Take((uint64_t{1} << 61) + 4, 8));
  EXPECT_EQ(24u, c.offset()) << "a failed Take consumes nothing";
}

}  // namespace
}  // namespace chitta::sidecar
