// csrc/recall/word_graph_io_test.cc
// WordIndex::SaveGraph / LoadGraph (the checkpoint's vocab.hnsw): a loaded
// graph is the writer's (its file again, byte for byte, and the same answers),
// a graph of the first rows is extended to the writer's, a graph built in steps
// with graph_now is the one built row by row across the limit, and a file
// unlike the rows is refused (run under the sanitizer build too).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "hnsw/test_util.h"
#include "recall/word_index.h"

namespace chitta::recall {
namespace {

using hnsw::testing::Clustered;
using hnsw::testing::Near;

constexpr uint32_t kDim = 16;
constexpr size_t kLimit = 200;

WordIndexOptions Opts(bool graph_now = false) {
  WordIndexOptions o;
  o.dim = kDim;
  o.exact_limit = kLimit;
  o.ef_construction = 100;
  o.graph_now = graph_now;
  return o;
}

std::unique_ptr<WordIndex> Make(bool graph_now = false) {
  auto r = WordIndex::Create(Opts(graph_now));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r.value());
}

std::string Bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string Temp(const std::string& name) {
  return ::testing::TempDir() + "/word_graph_io_" + name + ".hnsw";
}

std::vector<WordHit> SearchOf(const WordIndex& w, const float* q) {
  std::vector<WordHit> out;
  EXPECT_TRUE(w.Search(q, 10, &out).ok());
  return out;
}

bool SameHits(const std::vector<WordHit>& a, const std::vector<WordHit>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].row != b[i].row || std::memcmp(&a[i].cosine, &b[i].cosine, sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

TEST(WordGraphIo, ALoadedGraphIsTheWritersBitForBit) {
  constexpr size_t kN = 900;
  const auto rows = Clustered(kN, kDim, 12, 5);
  auto writer = Make();
  for (size_t at = 0; at < kN; at += 37) {  // crosses the limit part way, as refreshes do
    ASSERT_TRUE(writer->Add(rows.data() + at * kDim, std::min<size_t>(37, kN - at)).ok());
  }
  const std::string path = Temp("full");
  auto saved = writer->SaveGraph(path);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(saved.value(), kN);
  auto loaded = WordIndex::LoadGraph(Opts(), rows.data(), kN, path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded.value()->has_graph());
  const std::string again = Temp("again");
  ASSERT_TRUE(loaded.value()->SaveGraph(again).ok());
  EXPECT_EQ(Bytes(path), Bytes(again));
  const auto qs = Near(rows, kDim, 50, 3);
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_TRUE(SameHits(SearchOf(*writer, qs.data() + i * kDim),
                         SearchOf(*loaded.value(), qs.data() + i * kDim)));
  }
  // built in steps from the first row (graph_now): the same graph
  auto steps = Make(true);
  for (size_t at = 0; at < kN; at += 128) {
    ASSERT_TRUE(steps->Add(rows.data() + at * kDim, std::min<size_t>(128, kN - at)).ok());
  }
  const std::string stepped = Temp("steps");
  ASSERT_TRUE(steps->SaveGraph(stepped).ok());
  EXPECT_EQ(Bytes(path), Bytes(stepped));
  std::remove(path.c_str());
  std::remove(again.c_str());
  std::remove(stepped.c_str());
}

TEST(WordGraphIo, AGraphOfTheFirstRowsIsExtendedToTheWriters) {
  constexpr size_t kN = 700, kFirst = 450;
  const auto rows = Clustered(kN, kDim, 10, 8);
  auto early = Make();
  ASSERT_TRUE(early->Add(rows.data(), kFirst).ok());
  const std::string first = Temp("first");
  ASSERT_TRUE(early->SaveGraph(first).ok());
  ASSERT_TRUE(early->Add(rows.data() + kFirst * kDim, kN - kFirst).ok());
  const std::string full = Temp("later");
  ASSERT_TRUE(early->SaveGraph(full).ok());
  auto loaded = WordIndex::LoadGraph(Opts(), rows.data(), kN, first);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded.value()->size(), kFirst);
  ASSERT_TRUE(loaded.value()->Add(rows.data() + kFirst * kDim, kN - kFirst).ok());
  const std::string extended = Temp("extended");
  ASSERT_TRUE(loaded.value()->SaveGraph(extended).ok());
  EXPECT_EQ(Bytes(full), Bytes(extended));
  std::remove(first.c_str());
  std::remove(full.c_str());
  std::remove(extended.c_str());
}

TEST(WordGraphIo, AFileUnlikeTheRowsIsRefused) {
  constexpr size_t kN = 400;
  const auto rows = Clustered(kN, kDim, 8, 11);
  auto w = Make();
  const std::string path = Temp("refused");
  EXPECT_EQ(w->SaveGraph(path).status().code(), Code::kInvalidArgument);  // no graph yet
  ASSERT_TRUE(w->Add(rows.data(), kN).ok());
  ASSERT_TRUE(w->SaveGraph(path).ok());
  // fewer rows than the graph's nodes
  EXPECT_EQ(WordIndex::LoadGraph(Opts(), rows.data(), kN - 1, path).status().code(),
            Code::kCorruption);
  // a row unlike its node's vector
  auto other = rows;
  other[7 * kDim + 3] += 1e-3f;
  EXPECT_EQ(WordIndex::LoadGraph(Opts(), other.data(), kN, path).status().code(),
            Code::kCorruption);
  // other parameters
  WordIndexOptions wide = Opts();
  wide.M = 8;
  EXPECT_EQ(WordIndex::LoadGraph(wide, rows.data(), kN, path).status().code(), Code::kCorruption);
  // a damaged byte: the file's own checksum
  std::string bytes = Bytes(path);
  bytes[bytes.size() - 20] ^= 1;
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes; }
  EXPECT_EQ(WordIndex::LoadGraph(Opts(), rows.data(), kN, path).status().code(),
            Code::kCrcMismatch);
  std::remove(path.c_str());
  EXPECT_EQ(WordIndex::LoadGraph(Opts(), rows.data(), kN, path).status().code(), Code::kIOError);
}

}  // namespace
}  // namespace chitta::recall
