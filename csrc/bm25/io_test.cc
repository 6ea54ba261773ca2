// csrc/bm25/io_test.cc
// Save/Load of the BM25 index file: a round trip searches exactly like the
// original, and every kind of damage gives an error status, never a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "bm25/bm25_format.h"
#include "bm25/index.h"
#include "util/crc32c.h"

namespace chitta::bm25 {
namespace {

std::string TempPath(const char* name) {
  return ::testing::TempDir() + "bm25_io_" + std::to_string(::getpid()) + "_" + name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Rewrites the trailing CRC so that damage reaches the structural checks.
std::string Refix(std::string bytes) {
  const uint32_t crc = crc32c::Value(bytes.data(), bytes.size() - 4);
  std::memcpy(&bytes[bytes.size() - 4], &crc, 4);
  return bytes;
}

std::unique_ptr<Index> Build(uint64_t n, bool remove_some) {
  auto index = std::make_unique<Index>(1.1, 0.6, TokenizerOptions{true, true});
  std::mt19937_64 rng(5);
  std::vector<uint64_t> ids;
  std::vector<std::string> texts;
  for (uint64_t i = 0; i < n; ++i) {
    ids.push_back(i * 7 + 1);
    std::string t;
    for (int j = 0; j < 8; ++j) t += "word" + std::to_string(rng() % 50) + " running the ";
    texts.push_back(t);
  }
  std::string big;
  for (int i = 0; i < 70000; ++i) big += "zz ";
  texts[0] = big;  // an overflowing tf
  std::vector<std::string_view> views(texts.begin(), texts.end());
  EXPECT_TRUE(index->Add(ids.data(), views.data(), ids.size()).ok());
  if (remove_some) {
    std::vector<uint64_t> gone;
    for (uint64_t i = 1; i < n; i += 3) gone.push_back(ids[i]);
    EXPECT_TRUE(index->Remove(gone.data(), gone.size()).ok());
  }
  return index;
}

void ExpectSameSearches(const Index& a, const Index& b) {
  const std::vector<uint64_t> few = {1, 8, 15, 22, 29, 36, 43, 50};  // small: forward-index scoring
  for (const char* q : {"word1 word2", "word7 runs", "zz word3", "word49 word0 word0", "nothing"}) {
    std::vector<Hit> x, y, fx, fy;
    ASSERT_TRUE(a.Search(q, 20, nullptr, &x).ok());
    ASSERT_TRUE(b.Search(q, 20, nullptr, &y).ok());
    ASSERT_TRUE(a.Search(q, 5, &few, &fx).ok());
    ASSERT_TRUE(b.Search(q, 5, &few, &fy).ok());
    ASSERT_EQ(fx.size(), fy.size()) << q;
    for (size_t i = 0; i < fx.size(); ++i) EXPECT_EQ(fx[i].id, fy[i].id) << q;
    ASSERT_EQ(x.size(), y.size()) << q;
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].id, y[i].id) << q;
      EXPECT_EQ(std::memcmp(&x[i].score, &y[i].score, 4), 0) << q;
    }
  }
}

TEST(Bm25Io, RoundTripSearchesIdentically) {
  for (bool remove_some : {false, true}) {
    auto index = Build(300, remove_some);
    const std::string path = TempPath("rt");
    ASSERT_TRUE(index->Save(path).ok());
    auto loaded = Index::Load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    const Index& l = *loaded.value();
    EXPECT_EQ(l.size(), index->size());
    EXPECT_EQ(l.k1(), 1.1);
    EXPECT_EQ(l.b(), 0.6);
    EXPECT_TRUE(l.tokenizer().stem);
    EXPECT_EQ(l.VocabularySize(), index->VocabularySize());
    EXPECT_EQ(l.AverageDocLength(), index->AverageDocLength());
    EXPECT_EQ(l.DocFreq("zz"), 1u);
    ExpectSameSearches(*index, l);
    EXPECT_EQ(l.ExportDocs().size(), index->ExportDocs().size());
    // The loaded index keeps working: removal (forward index) and additions.
    const uint64_t gone[] = {1};
    ASSERT_TRUE(loaded.value()->Remove(gone, 1).ok());
    EXPECT_EQ(l.DocFreq("zz"), 0u);
    ASSERT_TRUE(index->Remove(gone, 1).ok());
    ExpectSameSearches(*index, l);
    std::remove(path.c_str());
  }
}

TEST(Bm25Io, EmptyIndexRoundTrips) {
  Index index(1.2, 0.75, {});
  const std::string path = TempPath("empty");
  ASSERT_TRUE(index.Save(path).ok());
  auto loaded = Index::Load(path);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded.value()->size(), 0u);
  std::remove(path.c_str());
}

TEST(Bm25Io, MissingFileIsIOError) {
  EXPECT_EQ(Index::Load(TempPath("missing")).status().code(), Code::kIOError);
}

TEST(Bm25Io, EveryFlippedByteIsRejected) {
  auto index = Build(40, true);
  const std::string path = TempPath("flip");
  ASSERT_TRUE(index->Save(path).ok());
  const std::string good = ReadAll(path);
  for (size_t i = 0; i < good.size(); i += 1 + good.size() / 150) {
    std::string bad = good;
    bad[i] ^= 0x20;
    WriteAll(path, bad);
    EXPECT_FALSE(Index::Load(path).ok()) << "byte " << i;
  }
  std::remove(path.c_str());
}

TEST(Bm25Io, EveryTruncationIsRejected) {
  auto index = Build(20, false);
  const std::string path = TempPath("trunc");
  ASSERT_TRUE(index->Save(path).ok());
  const std::string good = ReadAll(path);
  for (size_t n = 0; n < good.size(); n += 1 + good.size() / 100) {
    WriteAll(path, good.substr(0, n));
    EXPECT_FALSE(Index::Load(path).ok()) << n;
  }
  std::remove(path.c_str());
}

TEST(Bm25Io, StructuralDamageWithValidCrcIsCorruption) {
  // Damage behind a re-fixed CRC: bytes after the magic and version, one at a
  // time, as random values; each must fail cleanly or load a self-consistent
  // index (a changed id or a k1 still in range is valid).
  auto index = Build(30, true);
  const std::string path = TempPath("struct");
  ASSERT_TRUE(index->Save(path).ok());
  const std::string good = ReadAll(path);
  std::mt19937_64 rng(11);
  int rejected = 0;
  for (size_t i = 12; i + 4 < good.size(); i += 1 + good.size() / 300) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ (1 + rng() % 255));
    WriteAll(path, Refix(bad));
    auto r = Index::Load(path);
    if (!r.ok()) {
      ++rejected;
      EXPECT_NE(r.status().code(), Code::kOk);
    } else {
      std::vector<Hit> hits;  // whatever loaded must be searchable
      EXPECT_TRUE(r.value()->Search("word1 word2 zz", 5, nullptr, &hits).ok());
    }
  }
  EXPECT_GT(rejected, 30);
  std::remove(path.c_str());
}

TEST(Bm25Io, OtherMajorVersionIsUnsupported) {
  auto index = Build(5, false);
  const std::string path = TempPath("major");
  ASSERT_TRUE(index->Save(path).ok());
  std::string bytes = ReadAll(path);
  bytes[format::kOffMajor] = 2;
  WriteAll(path, Refix(bytes));
  EXPECT_EQ(Index::Load(path).status().code(), Code::kUnsupported);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace chitta::bm25
