// csrc/bm25/search_pruned_test.cc
// The pruned search (block-max MaxScore, forward scoring of small allowed sets)
// against the exhaustive search as the oracle: same ids, same scores bit for
// bit, same order, on random Zipf corpora with deletions, filters, repeated
// query terms and k from 1 to beyond the number of hits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bm25/index.h"

namespace chitta::bm25 {
namespace {

// Zipf(s) over `vocab` words, by inverse CDF.
class Zipf {
 public:
  Zipf(size_t vocab, double s) : cdf_(vocab) {
    double total = 0;
    for (size_t i = 0; i < vocab; ++i) cdf_[i] = total += 1.0 / std::pow(double(i + 1), s);
    for (double& c : cdf_) c /= total;
  }
  size_t operator()(std::mt19937_64& rng) const {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return std::min<size_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin(), cdf_.size() - 1);
  }

 private:
  std::vector<double> cdf_;
};

std::string Words(std::mt19937_64& rng, const Zipf& zipf, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "w" + std::to_string(zipf(rng)) + " ";
  return s;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

void ExpectIdentical(const Index& index, const std::string& q, size_t k,
                     const std::vector<uint64_t>* allowed) {
  std::vector<Hit> want, got;
  ASSERT_TRUE(index.Search(q, k, allowed, &want, Accumulator::kDense, Method::kExhaustive).ok());
  ASSERT_TRUE(index.Search(q, k, allowed, &got, Accumulator::kAuto, Method::kPruned).ok());
  ASSERT_EQ(got.size(), want.size()) << q << " k=" << k;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].id, want[i].id) << q << " k=" << k << " rank " << i;
    ASSERT_TRUE(SameBits(got[i].score, want[i].score)) << q << " rank " << i;
  }
  std::vector<Hit> sparse;
  ASSERT_TRUE(index.Search(q, k, allowed, &sparse, Accumulator::kSparse, Method::kExhaustive).ok());
  ASSERT_EQ(sparse.size(), want.size());
}

struct Corpus {
  double k1, b, zipf_s;
  size_t vocab, docs;
  int min_len, max_len;
};

void RunCorpus(const Corpus& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Zipf zipf(c.vocab, c.zipf_s);
  Index index(c.k1, c.b, {});
  std::vector<uint64_t> live;
  uint64_t next = 1000;
  for (int round = 0; round < 4; ++round) {
    std::vector<uint64_t> ids;
    std::vector<std::string> texts;
    std::uniform_int_distribution<int> len(c.min_len, c.max_len);
    for (size_t i = 0; i < c.docs / 4; ++i) {
      ids.push_back(next);
      next += 1 + rng() % 5;  // ids not dense; id order = insertion order
      texts.push_back(Words(rng, zipf, len(rng)));
    }
    if (round == 2) std::shuffle(ids.begin(), ids.end(), rng);  // id order != ordinal order
    std::vector<std::string_view> views(texts.begin(), texts.end());
    ASSERT_TRUE(index.Add(ids.data(), views.data(), ids.size()).ok());
    live.insert(live.end(), ids.begin(), ids.end());
    // Delete some (round 3 deletes most: compaction runs).
    std::vector<uint64_t> gone;
    std::vector<uint64_t> keep;
    for (uint64_t id : live) ((rng() % 10) < (round == 3 ? 6u : 1u) ? gone : keep).push_back(id);
    ASSERT_TRUE(index.Remove(gone.data(), gone.size()).ok());
    live.swap(keep);

    for (int qn = 0; qn < 40; ++qn) {
      std::string q = Words(rng, zipf, 1 + int(rng() % 6));
      if (qn % 5 == 0) q += q;  // repeated terms
      if (qn % 7 == 0) q += " unknownterm";
      for (size_t k : {size_t{1}, size_t{3}, size_t{10}, size_t{50}, live.size() + 5}) {
        ExpectIdentical(index, q, k, nullptr);
        // Filters: a large random half, a small handful, and ids not in the index.
        std::vector<uint64_t> half, few;
        for (uint64_t id : live) {
          if (rng() % 2) half.push_back(id);
          if (rng() % 97 == 0) few.push_back(id);
        }
        few.push_back(7);  // never indexed
        if (!few.empty()) few.push_back(few.front());  // a repeat
        std::sort(half.begin(), half.end());
        ExpectIdentical(index, q, k, &half);
        ExpectIdentical(index, q, k, &few);
      }
    }
  }
}

TEST(Bm25Pruned, MatchesExhaustiveOnZipfShortDocs) {
  RunCorpus({1.2, 0.75, 1.0, 300, 2000, 4, 14}, 1);
}

TEST(Bm25Pruned, MatchesExhaustiveWithSteepZipfAndVariedLengths) {
  RunCorpus({1.2, 0.75, 1.3, 80, 1200, 0, 40}, 2);
}

TEST(Bm25Pruned, MatchesExhaustiveWithExtremeParams) {
  RunCorpus({0.0, 0.0, 1.0, 50, 600, 1, 8}, 3);
  RunCorpus({3.0, 1.0, 0.8, 200, 800, 1, 30}, 4);
}

TEST(Bm25Pruned, TiesKeepSmallerIds) {
  // Many identical documents: scores tie exactly, so the top k is decided by id.
  Index index(1.2, 0.75, {});
  std::vector<uint64_t> ids;
  std::vector<std::string> texts;
  for (uint64_t i = 0; i < 1000; ++i) {
    ids.push_back(5000 - i * 3);  // descending ids: ordinal order is the reverse of id order
    texts.push_back(i % 4 == 0 ? "red fox jumps" : (i % 4 == 1 ? "red fox" : "blue hen"));
  }
  std::vector<std::string_view> views(texts.begin(), texts.end());
  ASSERT_TRUE(index.Add(ids.data(), views.data(), ids.size()).ok());
  for (size_t k : {1, 5, 300, 2000}) {
    ExpectIdentical(index, "red fox", k, nullptr);
    ExpectIdentical(index, "fox jumps hen", k, nullptr);
  }
}

// 20,000 documents of 12 Zipf words with ids 2i + 1; `extra(rng)` is appended to each text.
template <typename Extra>
std::vector<uint64_t> AddZipfDocs(Index* index, std::mt19937_64& rng, const Zipf& zipf, Extra extra) {
  std::vector<uint64_t> ids;
  std::vector<std::string> texts;
  for (uint64_t i = 0; i < 20000; ++i) ids.push_back(i * 2 + 1), texts.push_back(Words(rng, zipf, 12) + extra(rng));
  std::vector<std::string_view> views(texts.begin(), texts.end());
  EXPECT_TRUE(index->Add(ids.data(), views.data(), ids.size()).ok());
  return ids;
}

TEST(Bm25Pruned, LongListsSpanManyBlocks) {
  std::mt19937_64 rng(9);
  Zipf zipf(2000, 1.0);
  Index index(1.2, 0.75, {});
  AddZipfDocs(&index, rng, zipf, [](std::mt19937_64&) { return std::string(); });
  for (int qn = 0; qn < 50; ++qn) {
    const std::string q = Words(rng, zipf, 4);
    ExpectIdentical(index, q, 10, nullptr);
    ExpectIdentical(index, q, 100, nullptr);
  }
}

TEST(Bm25Pruned, ShortRarestListsStayExact) {
  // The rarest query terms hold fewer postings than k (SeedTheta gives no bound
  // then): exact against exhaustive, with deletions and filters, at k below, near
  // and above those lists' sizes.
  std::mt19937_64 rng(21);
  Zipf zipf(2000, 1.0);
  Index index(1.2, 0.75, {});
  const std::vector<uint64_t> ids = AddZipfDocs(&index, rng, zipf, [](std::mt19937_64& r) {
    const uint64_t x = r() % 20000;
    std::string t;
    if (x < 30) t += " rarea";
    if (x % 130 == 0) t += " rareb rareb";  // ~150 documents, tf 2
    if (x >= 30 && x < 40) t += " rarec";
    return t;
  });
  std::vector<uint64_t> gone;
  for (uint64_t id : ids) if (rng() % 10 == 0) gone.push_back(id);
  ASSERT_TRUE(index.Remove(gone.data(), gone.size()).ok());
  std::vector<uint64_t> half;
  for (uint64_t id : ids) if (rng() % 2) half.push_back(id);
  for (int qn = 0; qn < 12; ++qn) {
    std::string q = Words(rng, zipf, 2 + int(rng() % 3));
    q += qn % 3 == 0 ? " rarea rareb" : (qn % 3 == 1 ? " rareb" : " rarec rarea rareb");
    for (size_t k : {size_t{10}, size_t{50}, size_t{100}, size_t{150}, size_t{250}}) {
      ExpectIdentical(index, q, k, nullptr);
      ExpectIdentical(index, q, k, &half);
    }
  }
}

TEST(Bm25Pruned, BenchLikeQueriesAtDepthStayExact) {
  // bench_recall's shape (12 Zipf(1.3) words over 5,000, queries = 4 words of a
  // stored text) at the keyword lane's depths: runs of documents that one
  // essential list alone holds (the tight loop), probes of long non-essential
  // lists (the in-block count), windows where an essential cursor has no
  // posting, and seeds from lists shorter than k. With deletions, a filter,
  // repeated texts (exact ties at the k-th score), ids in shuffled order and a
  // few tf >= 65535 postings.
  std::mt19937_64 rng(31);
  Zipf zipf(5000, 1.3);
  Index index(1.2, 0.75, {});
  std::vector<uint64_t> ids;
  std::vector<std::string> texts;
  for (uint64_t i = 0; i < 24000; ++i) {
    ids.push_back(i * 7 + 3);
    if (i % 50 == 49) {
      texts.push_back(texts[rng() % texts.size()]);  // a repeated text: ties
    } else {
      texts.push_back(Words(rng, zipf, 12));
    }
  }
  for (int i = 0; i < 3; ++i) {  // tf >= 65535 for a frequent word in three documents
    std::string big;
    for (int j = 0; j < 66000; ++j) big += "w3 ";
    texts[rng() % texts.size()] += big;
  }
  std::shuffle(ids.begin(), ids.end(), rng);  // id order != ordinal order
  std::vector<std::string_view> views(texts.begin(), texts.end());
  ASSERT_TRUE(index.Add(ids.data(), views.data(), ids.size()).ok());
  std::vector<uint64_t> gone, keep;
  for (uint64_t id : ids) (rng() % 10 == 0 ? gone : keep).push_back(id);
  ASSERT_TRUE(index.Remove(gone.data(), gone.size()).ok());
  std::vector<uint64_t> half;
  for (uint64_t id : keep) if (rng() % 2) half.push_back(id);
  for (int qn = 0; qn < 60; ++qn) {
    std::string q;
    const std::string& t = texts[rng() % texts.size()];
    for (size_t at = 0, w = 0; w < 4 && at < t.size(); ++w) {
      const size_t sp = t.find(' ', at);
      q += t.substr(at, sp - at) + " ";
      at = sp + 1;
    }
    for (size_t k : {size_t{10}, size_t{50}, size_t{100}, size_t{200}}) {
      ExpectIdentical(index, q, k, nullptr);
      if (qn % 4 == 0) ExpectIdentical(index, q, k, &half);
    }
  }
}

}  // namespace
}  // namespace chitta::bm25
