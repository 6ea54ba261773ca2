// csrc/bm25/index_test.cc
// Index against a brute-force scorer written from the formula in index.h.
#include "bm25/index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace chitta::bm25 {
namespace {

// Reference: tokenize every live text, score every document directly.
std::vector<Hit> BruteForce(const std::map<uint64_t, std::string>& docs, const std::string& q,
                            size_t k, double k1, double b) {
  std::map<uint64_t, std::vector<std::string>> toks;
  double total = 0;
  std::map<std::string, int> df;
  for (const auto& [id, text] : docs) {
    std::vector<std::string> t;
    EXPECT_TRUE(Tokenize(text, {}, &t).ok());
    total += t.size();
    std::vector<std::string> u = t;
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    for (const auto& w : u) ++df[w];
    toks[id] = std::move(t);
  }
  std::vector<std::string> qt;
  EXPECT_TRUE(Tokenize(q, {}, &qt).ok());
  const double n = docs.size();
  const double avgdl = total / n;
  std::vector<Hit> hits;
  for (const auto& [id, t] : toks) {
    double s = 0;
    for (const auto& w : qt) {
      if (df[w] == 0) continue;
      const double tf = std::count(t.begin(), t.end(), w);
      if (tf == 0) continue;
      const double idf = std::log(1 + (n - df[w] + 0.5) / (df[w] + 0.5));
      s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * t.size() / avgdl));
    }
    if (s > 0) hits.push_back({id, static_cast<float>(s)});
  }
  std::sort(hits.begin(), hits.end(), [](const Hit& x, const Hit& y) {
    return x.score > y.score || (x.score == y.score && x.id < y.id);
  });
  if (hits.size() > k) hits.resize(k);
  return hits;
}

const char* kWords[] = {"alpha", "beta",  "gamma", "delta", "port8080", "river",  "stone",
                        "cloud", "tiger", "mango", "paper", "snake_case", "über", "москва"};

std::string RandomText(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> len(0, 12);
  std::geometric_distribution<int> word(0.25);
  std::string s;
  for (int i = len(rng); i > 0; --i) {
    s += kWords[std::min<size_t>(word(rng), std::size(kWords) - 1)];
    s += (i % 3 == 0) ? ", the " : " ";
  }
  return s;
}

void ExpectSameHits(const std::vector<Hit>& got, const std::vector<Hit>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].score, want[i].score, 1e-5 * want[i].score) << i;
    // Ties within float noise may reorder; ids must match when scores differ clearly.
    if (i + 1 < want.size() && want[i].score - want[i + 1].score > 1e-4 &&
        (i == 0 || want[i - 1].score - want[i].score > 1e-4)) {
      EXPECT_EQ(got[i].id, want[i].id) << i;
    }
  }
}

TEST(Bm25Index, MatchesBruteForceUnderRandomAddRemove) {
  std::mt19937_64 rng(42);
  Index index(1.2, 0.75, {});
  std::map<uint64_t, std::string> model;
  uint64_t next_id = 1;
  for (int round = 0; round < 40; ++round) {
    std::vector<uint64_t> ids;
    std::vector<std::string> texts;
    for (int i = 0; i < 20; ++i) ids.push_back(next_id++), texts.push_back(RandomText(rng));
    std::vector<std::string_view> views(texts.begin(), texts.end());
    ASSERT_TRUE(index.Add(ids.data(), views.data(), ids.size()).ok());
    for (size_t i = 0; i < ids.size(); ++i) model[ids[i]] = texts[i];
    std::vector<uint64_t> victims;
    for (const auto& [id, _] : model) {
      if (rng() % 3 == 0) victims.push_back(id);
    }
    ASSERT_TRUE(index.Remove(victims.data(), victims.size()).ok());
    for (uint64_t id : victims) model.erase(id);
    ASSERT_EQ(index.size(), model.size());
    if (model.empty()) continue;
    for (const char* q : {"alpha beta", "tiger mango mango", "москва über", "port8080"}) {
      for (auto acc : {Accumulator::kDense, Accumulator::kSparse}) {
        std::vector<Hit> got;
        ASSERT_TRUE(index.Search(q, 7, nullptr, &got, acc).ok());
        ExpectSameHits(got, BruteForce(model, q, 7, 1.2, 0.75));
      }
    }
  }
  EXPECT_LT(index.OrdinalSlots(), 2 * index.size() + 64);  // compaction ran
}

TEST(Bm25Index, RemoveAfterCompactionKeepsStatisticsExact) {
  // Regression: compaction emptied the term lists of documents whose ordinal
  // did not move, so removing them later left their df behind.
  Index index(1.2, 0.75, {});
  std::vector<uint64_t> ids;
  std::vector<std::string> texts;
  for (uint64_t i = 0; i < 200; ++i) ids.push_back(i), texts.push_back("shared w" + std::to_string(i));
  std::vector<std::string_view> views(texts.begin(), texts.end());
  ASSERT_TRUE(index.Add(ids.data(), views.data(), ids.size()).ok());
  ASSERT_TRUE(index.Remove(ids.data() + 50, 150).ok());  // compacts; ordinals 0..49 stay put
  EXPECT_EQ(index.OrdinalSlots(), 50u);
  ASSERT_TRUE(index.Remove(ids.data(), 10).ok());
  EXPECT_EQ(index.DocFreq("shared"), 40u);
  EXPECT_EQ(index.DocFreq("w3"), 0u);
  EXPECT_EQ(index.VocabularySize(), 41u);
  EXPECT_DOUBLE_EQ(index.AverageDocLength(), 2.0);
}

TEST(Bm25Index, AllowedRestrictsHits) {
  Index index(1.2, 0.75, {});
  const uint64_t ids[] = {1, 2, 3, 4};
  const std::string_view texts[] = {"red fox", "red red fox", "blue fox", "red"};
  ASSERT_TRUE(index.Add(ids, texts, 4).ok());
  std::vector<uint64_t> allowed = {3, 4, 4, 99};
  for (auto acc : {Accumulator::kDense, Accumulator::kSparse}) {
    std::vector<Hit> hits;
    ASSERT_TRUE(index.Search("red fox", 10, &allowed, &hits, acc).ok());
    ASSERT_EQ(hits.size(), 2u);
    EXPECT_EQ(hits[0].id + hits[1].id, 7u);
  }
}

TEST(Bm25Index, DuplicateIdInBatchChangesNothing) {
  Index index(1.2, 0.75, {});
  const uint64_t ids[] = {5, 5};
  const std::string_view texts[] = {"a b", "c d"};
  EXPECT_EQ(index.Add(ids, texts, 2).code(), Code::kInvalidArgument);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.VocabularySize(), 0u);
}

TEST(Bm25Index, ExistingIdChangesNothing) {
  Index index(1.2, 0.75, {});
  const uint64_t a[] = {1};
  const std::string_view ta[] = {"hello"};
  ASSERT_TRUE(index.Add(a, ta, 1).ok());
  const uint64_t b[] = {2, 1};
  const std::string_view tb[] = {"world", "again"};
  EXPECT_EQ(index.Add(b, tb, 2).code(), Code::kInvalidArgument);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.DocFreq("world"), 0u);
}

TEST(Bm25Index, PadIdRejected) {
  Index index(1.2, 0.75, {});
  const uint64_t ids[] = {kPadId};
  const std::string_view texts[] = {"x"};
  EXPECT_EQ(index.Add(ids, texts, 1).code(), Code::kInvalidArgument);
}

TEST(Bm25Index, InvalidUtf8TextChangesNothing) {
  Index index(1.2, 0.75, {});
  const uint64_t ids[] = {1, 2};
  const std::string_view texts[] = {"fine", "bad\xFF"};
  EXPECT_EQ(index.Add(ids, texts, 2).code(), Code::kInvalidArgument);
  EXPECT_EQ(index.size(), 0u);
}

TEST(Bm25Index, RemoveUnknownIdIsNotFoundAndChangesNothing) {
  Index index(1.2, 0.75, {});
  const uint64_t ids[] = {1, 2};
  const std::string_view texts[] = {"a1 b1", "a1"};
  ASSERT_TRUE(index.Add(ids, texts, 2).ok());
  const uint64_t gone[] = {1, 3};
  EXPECT_EQ(index.Remove(gone, 2).code(), Code::kNotFound);
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.DocFreq("a1"), 2u);
}

TEST(Bm25Index, HugeTermFrequencyUsesOverflowPath) {
  Index index(1.2, 0.75, {});
  std::string big;
  for (int i = 0; i < 70000; ++i) big += "zz ";
  const uint64_t ids[] = {1, 2};
  const std::string_view texts[] = {big, "zz yy"};
  ASSERT_TRUE(index.Add(ids, texts, 2).ok());
  std::map<uint64_t, std::string> model{{1, big}, {2, "zz yy"}};
  std::vector<Hit> got;
  ASSERT_TRUE(index.Search("zz", 2, nullptr, &got).ok());
  ExpectSameHits(got, BruteForce(model, "zz", 2, 1.2, 0.75));
  auto docs = index.ExportDocs();
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].terms[0].second, 70000u);
}

TEST(Bm25Index, EmptyAndStopwordQueriesGiveNoHits) {
  Index index(1.2, 0.75, {});
  const uint64_t ids[] = {1};
  const std::string_view texts[] = {"the cat"};
  ASSERT_TRUE(index.Add(ids, texts, 1).ok());
  std::vector<Hit> hits;
  ASSERT_TRUE(index.Search("", 3, nullptr, &hits).ok());
  EXPECT_TRUE(hits.empty());
  ASSERT_TRUE(index.Search("the", 3, nullptr, &hits).ok());
  EXPECT_TRUE(hits.empty());
  EXPECT_EQ(index.Search("cat", 0, nullptr, &hits).code(), Code::kInvalidArgument);
}

TEST(Bm25Index, BadParamsRejected) {
  EXPECT_FALSE(Index::ValidateParams(-1, 0.5).ok());
  EXPECT_FALSE(Index::ValidateParams(1.2, 1.5).ok());
  EXPECT_FALSE(Index::ValidateParams(NAN, 0.5).ok());
  EXPECT_TRUE(Index::ValidateParams(0, 0).ok());
}

TEST(Bm25Index, ConcurrentSearchesWhileAdding) {
  Index index(1.2, 0.75, {});
  std::mt19937_64 rng(3);
  std::vector<std::string> texts;
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < 400; ++i) ids.push_back(i), texts.push_back(RandomText(rng));
  std::vector<std::string_view> views(texts.begin(), texts.end());
  ASSERT_TRUE(index.Add(ids.data(), views.data(), 200).ok());
  std::vector<std::thread> readers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        std::vector<Hit> hits;
        if (!index.Search("alpha tiger", 5, nullptr, &hits).ok() || hits.empty()) ++failures;
        for (size_t j = 1; j < hits.size(); ++j) failures += hits[j - 1].score < hits[j].score;
      }
    });
  }
  for (size_t i = 200; i < 400; i += 20) {
    ASSERT_TRUE(index.Add(ids.data() + i, views.data() + i, 20).ok());
  }
  for (auto& th : readers) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace chitta::bm25
