// csrc/posting/posting_index_test.cc
// PostingIndex against the brute-force Model (posting_test_util.h): random
// codes over few features so overlaps and activation sums tie often.
#include "posting/posting_index.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "posting/posting_test_util.h"

namespace chitta::posting {
namespace {

using testing::Model;
using testing::RandomActivations;
using testing::RandomCode;

std::unique_ptr<PostingIndex> MakeIndex(uint32_t n_features, uint32_t active,
                                        double compact_fraction = kDefaultCompactFraction) {
  Options o;
  o.n_features = n_features;
  o.active = active;
  o.compact_fraction = compact_fraction;
  auto r = PostingIndex::Create(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r.value());
}

// Adds one memory to both the index and the model.
void AddBoth(PostingIndex& index, Model& model, uint64_t id, const std::vector<uint32_t>& f,
             const std::vector<float>* act) {
  ASSERT_TRUE(index.Add(&id, 1, f.data(), act ? act->data() : nullptr).ok());
  model.Add(id, f, act ? *act : std::vector<float>(f.size(), 1.0f));
}

void ExpectSameAsModel(const PostingIndex& index, const Model& model,
                       const std::vector<uint32_t>& query, size_t k,
                       const std::vector<uint64_t>* allowed) {
  std::vector<uint64_t> want_ids, got_ids(k);
  std::vector<uint32_t> want_counts, got_counts(k);
  model.Search(query, k, allowed, &want_ids, &want_counts);
  AllowedIds a;
  if (allowed) a = AllowedIds{allowed->data(), allowed->size()};
  ASSERT_TRUE(index.Search(query.data(), 1, query.size(), k, allowed ? &a : nullptr,
                           got_ids.data(), got_counts.data())
                  .ok());
  ASSERT_EQ(want_ids, got_ids);
  ASSERT_EQ(want_counts, got_counts);
}

TEST(PostingIndex, CreateRejectsBadOptions) {
  Options o;
  o.n_features = 0;
  EXPECT_EQ(Code::kInvalidArgument, PostingIndex::Create(o).status().code());
  o = Options{};
  o.active = 256;
  EXPECT_EQ(Code::kInvalidArgument, PostingIndex::Create(o).status().code());
  o = Options{};
  o.n_features = 8;
  o.active = 9;
  EXPECT_EQ(Code::kInvalidArgument, PostingIndex::Create(o).status().code());
  o = Options{};
  o.compact_fraction = 0.0;
  EXPECT_EQ(Code::kInvalidArgument, PostingIndex::Create(o).status().code());
}

TEST(PostingIndex, EmptyIndexPadsEveryResult) {
  auto index = MakeIndex(64, 4);
  std::vector<uint32_t> q = {1, 2, 3, 4};
  std::vector<uint64_t> ids(3, 7);
  std::vector<uint32_t> counts(3, 7);
  ASSERT_TRUE(index->Search(q.data(), 1, 4, 3, nullptr, ids.data(), counts.data()).ok());
  EXPECT_EQ(std::vector<uint64_t>(3, kPadId), ids);
  EXPECT_EQ(std::vector<uint32_t>(3, 0), counts);
}

TEST(PostingIndex, UnitActivationsMatchBruteForce) {
  std::mt19937_64 rng(1);
  auto index = MakeIndex(40, 8);
  Model model;
  for (uint64_t id = 0; id < 600; ++id) AddBoth(*index, model, id * 3 + 11, RandomCode(rng, 40, 8), nullptr);
  EXPECT_TRUE(index->unit_activations());
  for (int t = 0; t < 40; ++t) {
    const size_t k = 1 + rng() % 50;
    ExpectSameAsModel(*index, model, RandomCode(rng, 40, 1 + rng() % 12), k, nullptr);
  }
}

// Reserve sizes the lists for what comes (counts exact, short or long of it) and
// changes no result: the brute-force model still agrees after the adds.
TEST(PostingIndex, ReserveBeforeAddsChangesNoResult) {
  std::mt19937_64 rng(9);
  for (int variant = 0; variant < 3; ++variant) {
    auto index = MakeIndex(48, 8);
    Model model;
    std::vector<std::vector<uint32_t>> codes;
    std::vector<uint32_t> counts(48, 0);
    for (int i = 0; i < 400; ++i) {
      codes.push_back(RandomCode(rng, 48, 8));
      for (uint32_t f : codes.back()) ++counts[f];
    }
    if (variant == 1) for (auto& c : counts) c /= 2;  // short of what comes
    if (variant == 2) for (auto& c : counts) c *= 3;  // more than comes
    index->Reserve(variant == 1 ? 200 : 400, counts.data(), /*activations=*/variant != 0);
    index->Reserve(0, nullptr, false);  // nothing: harmless
    for (uint64_t id = 0; id < codes.size(); ++id) {
      auto act = RandomActivations(rng, 8);
      AddBoth(*index, model, id + 1, codes[id], variant == 0 ? nullptr : &act);
    }
    EXPECT_EQ(400u, index->size());
    for (int t = 0; t < 30; ++t) {
      ExpectSameAsModel(*index, model, RandomCode(rng, 48, 8), 1 + rng() % 60, nullptr);
    }
  }
}

TEST(PostingIndex, ActivationTieBreakMatchesBruteForce) {
  std::mt19937_64 rng(2);
  auto index = MakeIndex(48, 8);
  Model model;
  for (uint64_t id = 0; id < 500; ++id) {
    auto act = RandomActivations(rng, 8);
    AddBoth(*index, model, id, RandomCode(rng, 48, 8), id % 5 == 0 ? nullptr : &act);
  }
  EXPECT_FALSE(index->unit_activations());
  for (CountMode mode : {CountMode::kTouchedList, CountMode::kDenseScan}) {
    index->set_count_mode_for_test(mode);
    for (int t = 0; t < 40; ++t) {
      ExpectSameAsModel(*index, model, RandomCode(rng, 48, 8), 1 + rng() % 80, nullptr);
    }
  }
  ExpectSameAsModel(*index, model, RandomCode(rng, 48, 8), 1000, nullptr);  // k > hits
}

TEST(PostingIndex, RemovalsCompactionAndAllowedMatchBruteForce) {
  std::mt19937_64 rng(3);
  auto index = MakeIndex(50, 6, 0.3);
  Model model;
  uint64_t next_id = 1;
  std::vector<uint64_t> live;
  const AllowedStrategy strategies[] = {AllowedStrategy::kAuto, AllowedStrategy::kCountPostings,
                                        AllowedStrategy::kScanAllowed};
  for (int round = 0; round < 30; ++round) {
    for (int i = 0; i < 40; ++i) {
      auto act = RandomActivations(rng, 6);
      AddBoth(*index, model, next_id, RandomCode(rng, 50, 6), &act);
      live.push_back(next_id++);
    }
    std::shuffle(live.begin(), live.end(), rng);
    const size_t n_remove = rng() % 25;
    for (size_t i = 0; i < n_remove; ++i) {
      ASSERT_TRUE(index->Remove(&live.back(), 1).ok());
      model.Remove(live.back());
      live.pop_back();
    }
    if (round % 7 == 3) index->Compact();
    ASSERT_EQ(model.size(), index->size());
    // Allowed: some live ids, some removed/unknown ids, a duplicate.
    std::vector<uint64_t> allowed;
    for (uint64_t id : live) {
      if (rng() % 3 == 0) allowed.push_back(id);
    }
    allowed.push_back(next_id + 1000);
    if (!allowed.empty()) allowed.push_back(allowed.front());
    for (AllowedStrategy s : strategies) {
      index->set_allowed_strategy_for_test(s);
      index->set_count_mode_for_test(round % 2 ? CountMode::kDenseScan : CountMode::kTouchedList);
      const auto q = RandomCode(rng, 50, 6);
      const size_t k = 1 + rng() % 30;
      ExpectSameAsModel(*index, model, q, k, &allowed);
      ExpectSameAsModel(*index, model, q, k, nullptr);
    }
  }
}

TEST(PostingIndex, RemovedIdIsSkippedAndCanBeAddedAgain) {
  auto index = MakeIndex(16, 4, 1.0);  // never auto-compacts
  Model model;
  AddBoth(*index, model, 5, {0, 1, 2, 3}, nullptr);
  AddBoth(*index, model, 6, {0, 1, 2, 4}, nullptr);
  uint64_t five = 5;
  ASSERT_TRUE(index->Remove(&five, 1).ok());
  model.Remove(5);
  EXPECT_FALSE(index->Contains(5));
  EXPECT_EQ(1u, index->num_tombstones());
  ExpectSameAsModel(*index, model, {0, 1, 2, 3}, 3, nullptr);
  // Re-added: a new ordinal after 6, so 6 now wins the tie.
  AddBoth(*index, model, 5, {0, 1, 2, 4}, nullptr);
  ExpectSameAsModel(*index, model, {0, 1, 2, 4}, 3, nullptr);
  std::vector<uint64_t> want = {6, 5};
  EXPECT_EQ(want, index->LiveIds());
}

TEST(PostingIndex, AutoCompactsPastFraction) {
  auto index = MakeIndex(32, 4, 0.25);
  std::vector<uint64_t> ids(8);
  std::vector<uint32_t> rows;
  for (uint64_t i = 0; i < 8; ++i) {
    ids[i] = i;
    for (uint32_t j = 0; j < 4; ++j) rows.push_back(static_cast<uint32_t>(i + j * 8));
  }
  ASSERT_TRUE(index->Add(ids.data(), 8, rows.data(), nullptr).ok());
  ASSERT_TRUE(index->Remove(ids.data(), 2).ok());  // 2/8 = 25%: not over
  EXPECT_EQ(2u, index->num_tombstones());
  ASSERT_TRUE(index->Remove(ids.data() + 2, 1).ok());  // 3/8 > 25%
  EXPECT_EQ(0u, index->num_tombstones());
  EXPECT_EQ(5u, index->size());
}

TEST(PostingIndex, BatchedAndThreadedSearchEqualSingleQueries) {
  std::mt19937_64 rng(4);
  auto index = MakeIndex(64, 8);
  Model model;
  for (uint64_t id = 0; id < 400; ++id) {
    auto act = RandomActivations(rng, 8);
    AddBoth(*index, model, id, RandomCode(rng, 64, 8), &act);
  }
  const size_t nq = 37, k = 9, w = 8;
  std::vector<uint32_t> queries;
  for (size_t i = 0; i < nq; ++i) {
    auto q = RandomCode(rng, 64, w);
    queries.insert(queries.end(), q.begin(), q.end());
  }
  for (unsigned threads : {1u, 3u, 0u}) {
    std::vector<uint64_t> ids(nq * k);
    std::vector<uint32_t> counts(nq * k);
    ASSERT_TRUE(index->Search(queries.data(), nq, w, k, nullptr, ids.data(), counts.data(), threads).ok());
    for (size_t i = 0; i < nq; ++i) {
      std::vector<uint64_t> want_ids;
      std::vector<uint32_t> want_counts;
      model.Search({queries.begin() + i * w, queries.begin() + (i + 1) * w}, k, nullptr, &want_ids, &want_counts);
      ASSERT_EQ(want_ids, std::vector<uint64_t>(ids.begin() + i * k, ids.begin() + (i + 1) * k));
      ASSERT_EQ(want_counts, std::vector<uint32_t>(counts.begin() + i * k, counts.begin() + (i + 1) * k));
    }
  }
}

TEST(PostingIndex, ConcurrentReadersSeeTheSameResults) {
  std::mt19937_64 rng(5);
  auto index = MakeIndex(64, 8);
  Model model;
  for (uint64_t id = 0; id < 300; ++id) AddBoth(*index, model, id, RandomCode(rng, 64, 8), nullptr);
  std::vector<std::vector<uint32_t>> queries;
  for (int i = 0; i < 16; ++i) queries.push_back(RandomCode(rng, 64, 8));
  std::vector<std::thread> readers;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        for (const auto& q : queries) {
          std::vector<uint64_t> want, got(5);
          std::vector<uint32_t> wc, gc(5);
          model.Search(q, 5, nullptr, &want, &wc);
          if (!index->Search(q.data(), 1, q.size(), 5, nullptr, got.data(), gc.data()).ok() ||
              got != want || gc != wc) {
            ++mismatches[t];
          }
        }
      }
    });
  }
  for (auto& th : readers) th.join();
  EXPECT_EQ(std::vector<int>(4, 0), mismatches);
}

TEST(PostingIndex, GetReturnsSortedRowWithAlignedActivations) {
  auto index = MakeIndex(16, 3);
  uint64_t id = 9;
  std::vector<uint32_t> f = {7, 2, 5};
  std::vector<float> act = {0.7f, 0.2f, 0.5f};
  ASSERT_TRUE(index->Add(&id, 1, f.data(), act.data()).ok());
  std::vector<uint32_t> got_f(3);
  std::vector<float> got_a(3);
  ASSERT_TRUE(index->Get(9, got_f.data(), got_a.data()).ok());
  EXPECT_EQ((std::vector<uint32_t>{2, 5, 7}), got_f);
  EXPECT_EQ((std::vector<float>{0.2f, 0.5f, 0.7f}), got_a);
  EXPECT_EQ(Code::kNotFound, index->Get(10, got_f.data(), got_a.data()).code());
}

}  // namespace
}  // namespace chitta::posting
