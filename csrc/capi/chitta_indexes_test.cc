// csrc/capi/chitta_indexes_test.cc
// The index half of the C API, checked against brute force computed here:
// posting overlap counts, Hamming distances, HNSW recall against exact
// cosine neighbours; and bad arguments -> CF_EINVAL / CF_ENOTFOUND.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "chitta/chitta_field.h"

namespace {

TEST(CapiPosting, TopKCountsMatchBruteForce) {
  const uint32_t nf = 512, active = 8;
  const size_t n = 300, nq = 20, k = 10;
  std::mt19937_64 rng(7);
  std::vector<uint64_t> ids(n);
  std::vector<uint32_t> feats(n * active);
  std::vector<uint32_t> all(nf);
  std::iota(all.begin(), all.end(), 0u);
  for (size_t i = 0; i < n; ++i) {
    ids[i] = 1000 + i * 3;
    std::shuffle(all.begin(), all.end(), rng);
    std::copy(all.begin(), all.begin() + active, feats.begin() + i * active);
  }
  cf_posting_t* p = nullptr;
  ASSERT_EQ(cf_posting_new(nf, active, &p), CF_OK) << cf_last_error();
  ASSERT_EQ(cf_posting_add(p, ids.data(), n, feats.data(), nullptr), CF_OK) << cf_last_error();
  size_t size = 0;
  ASSERT_EQ(cf_posting_size(p, &size), CF_OK);
  EXPECT_EQ(size, n);

  // Queries share part of a stored row, so overlaps vary.
  std::vector<uint32_t> queries(nq * active);
  for (size_t q = 0; q < nq; ++q) {
    std::set<uint32_t> row(feats.begin() + q * 7 * active, feats.begin() + q * 7 * active + 4);
    while (row.size() < active) row.insert(static_cast<uint32_t>(rng() % nf));
    std::copy(row.begin(), row.end(), queries.begin() + q * active);
  }
  std::vector<uint64_t> out_ids(nq * k);
  std::vector<uint32_t> out_counts(nq * k);
  ASSERT_EQ(cf_posting_search(p, queries.data(), nq, active, k, nullptr, 0, 1, out_ids.data(),
                              out_counts.data()),
            CF_OK);
  for (size_t q = 0; q < nq; ++q) {
    std::set<uint32_t> qs(queries.begin() + q * active, queries.begin() + (q + 1) * active);
    std::vector<uint32_t> overlap(n);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < active; ++j) overlap[i] += qs.count(feats[i * active + j]);
    }
    std::vector<uint32_t> sorted = overlap;
    std::sort(sorted.rbegin(), sorted.rend());
    for (size_t r = 0; r < k; ++r) {
      const uint32_t want = sorted[r];
      if (want == 0) {
        EXPECT_EQ(out_counts[q * k + r], 0u);
        continue;
      }
      EXPECT_EQ(out_counts[q * k + r], want) << "query " << q << " rank " << r;
      const uint64_t id = out_ids[q * k + r];
      ASSERT_GE(id, 1000u);
      EXPECT_EQ(overlap[(id - 1000) / 3], want);  // the id's true overlap
    }
  }
  // A filter to one id: only it comes back.
  const uint64_t only = ids[0];
  ASSERT_EQ(cf_posting_search(p, feats.data(), 1, active, k, &only, 1, 1, out_ids.data(),
                              out_counts.data()),
            CF_OK);
  EXPECT_EQ(out_ids[0], only);
  EXPECT_EQ(out_counts[0], active);
  EXPECT_EQ(out_ids[1], UINT64_MAX);
  // Remove, then bad removes change nothing.
  ASSERT_EQ(cf_posting_remove(p, &only, 1), CF_OK);
  EXPECT_EQ(cf_posting_remove(p, &only, 1), CF_ENOTFOUND);
  ASSERT_EQ(cf_posting_size(p, &size), CF_OK);
  EXPECT_EQ(size, n - 1);
  cf_posting_free(p);
}

TEST(CapiPosting, BadArgumentsAreEinval) {
  cf_posting_t* p = nullptr;
  EXPECT_EQ(cf_posting_new(16, 8, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_posting_new(16, 300, &p), CF_EINVAL);  // active > 255
  ASSERT_EQ(cf_posting_new(16, 2, &p), CF_OK);
  const uint64_t id = 1;
  const uint32_t f[2] = {3, 3};  // duplicate feature
  EXPECT_EQ(cf_posting_add(p, &id, 1, f, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_posting_add(p, &id, 1, nullptr, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_posting_add(nullptr, &id, 1, f, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_posting_add(p, &id, SIZE_MAX, f, nullptr), CF_EINVAL);  // overflow
  uint64_t oi[1];
  uint32_t oc[1];
  const uint32_t q[2] = {1, 2};
  EXPECT_EQ(cf_posting_search(p, q, 1, 2, 0, nullptr, 0, 1, oi, oc), CF_EINVAL);
  EXPECT_EQ(cf_posting_search(p, q, 1, 2, 1, nullptr, 0, 1, nullptr, oc), CF_EINVAL);
  EXPECT_EQ(cf_posting_search(p, q, 1, 2, 1, nullptr, 3, 1, oi, oc), CF_EINVAL);
  EXPECT_EQ(cf_posting_size(p, nullptr), CF_EINVAL);
  size_t size = 9;
  ASSERT_EQ(cf_posting_size(p, &size), CF_OK);
  EXPECT_EQ(size, 0u);
  cf_posting_free(p);
  cf_posting_free(nullptr);
}

int Popcount(uint64_t x) { return __builtin_popcountll(x); }

TEST(CapiHamming, DistancesMatchBruteForce) {
  const size_t bits = 128, words = 2, n = 500, nq = 10, k = 8;
  std::mt19937_64 rng(11);
  std::vector<uint64_t> ids(n), codes(n * words), queries(nq * words);
  for (size_t i = 0; i < n; ++i) ids[i] = i + 1;
  for (auto& w : codes) w = rng();
  for (auto& w : queries) w = rng();
  cf_hamming_t* h = nullptr;
  ASSERT_EQ(cf_hamming_new(bits, &h), CF_OK);
  ASSERT_EQ(cf_hamming_add(h, ids.data(), codes.data(), n), CF_OK) << cf_last_error();
  std::vector<uint64_t> out_ids(nq * k);
  std::vector<uint32_t> out_dist(nq * k);
  ASSERT_EQ(cf_hamming_search(h, queries.data(), nq, k, out_ids.data(), out_dist.data()), CF_OK);
  for (size_t q = 0; q < nq; ++q) {
    std::vector<std::pair<uint32_t, uint64_t>> all;
    for (size_t i = 0; i < n; ++i) {
      uint32_t d = 0;
      for (size_t w = 0; w < words; ++w) d += Popcount(codes[i * words + w] ^ queries[q * words + w]);
      all.push_back({d, ids[i]});  // ids ascend with insertion order: the same tie-break
    }
    std::sort(all.begin(), all.end());
    for (size_t r = 0; r < k; ++r) {
      EXPECT_EQ(out_dist[q * k + r], all[r].first);
      EXPECT_EQ(out_ids[q * k + r], all[r].second);
    }
  }
  EXPECT_EQ(cf_hamming_new(100, &h), CF_EINVAL);  // not a multiple of 64; h untouched
  EXPECT_EQ(cf_hamming_add(h, ids.data(), codes.data(), 1), CF_EINVAL);  // id 1 already there
  EXPECT_EQ(cf_hamming_add(h, ids.data(), nullptr, 1), CF_EINVAL);
  EXPECT_EQ(cf_hamming_search(h, queries.data(), 1, 0, out_ids.data(), out_dist.data()), CF_EINVAL);
  EXPECT_EQ(cf_hamming_search(nullptr, queries.data(), 1, 1, out_ids.data(), out_dist.data()),
            CF_EINVAL);
  const uint64_t missing = 999999;
  EXPECT_EQ(cf_hamming_remove(h, &missing, 1), CF_ENOTFOUND);
  size_t size = 0;
  ASSERT_EQ(cf_hamming_size(h, &size), CF_OK);
  EXPECT_EQ(size, n);
  cf_hamming_free(h);
  cf_hamming_free(nullptr);
}

TEST(CapiHnsw, RecallAgainstExactCosine) {
  const uint32_t dim = 24;
  const size_t n = 2000, nq = 50, k = 10;
  std::mt19937_64 rng(3);
  std::normal_distribution<float> g(0.f, 1.f);
  std::vector<float> data(n * dim), queries(nq * dim);
  for (auto& x : data) x = g(rng);
  for (auto& x : queries) x = g(rng);
  std::vector<uint64_t> ids(n);
  std::iota(ids.begin(), ids.end(), uint64_t{10});
  cf_hnsw_t* h = nullptr;
  ASSERT_EQ(cf_hnsw_new(dim, CF_METRIC_COSINE, 16, 100, 42, &h), CF_OK) << cf_last_error();
  ASSERT_EQ(cf_hnsw_add(h, ids.data(), data.data(), n, 1), CF_OK) << cf_last_error();
  std::vector<uint64_t> out_ids(nq * k);
  std::vector<float> out_dist(nq * k);
  ASSERT_EQ(cf_hnsw_search(h, queries.data(), nq, k, 64, nullptr, 0, 1, out_ids.data(),
                           out_dist.data()),
            CF_OK);
  auto norm = [&](const float* v) {
    double s = 0;
    for (uint32_t j = 0; j < dim; ++j) s += double(v[j]) * v[j];
    return std::sqrt(s);
  };
  size_t hits = 0;
  for (size_t q = 0; q < nq; ++q) {
    std::vector<std::pair<double, uint64_t>> all;
    const float* qv = &queries[q * dim];
    for (size_t i = 0; i < n; ++i) {
      const float* v = &data[i * dim];
      double dot = 0;
      for (uint32_t j = 0; j < dim; ++j) dot += double(qv[j]) * v[j];
      all.push_back({1.0 - dot / (norm(qv) * norm(v)), ids[i]});
    }
    std::partial_sort(all.begin(), all.begin() + k, all.end());
    std::set<uint64_t> truth;
    for (size_t r = 0; r < k; ++r) truth.insert(all[r].second);
    for (size_t r = 0; r < k; ++r) hits += truth.count(out_ids[q * k + r]);
    EXPECT_NEAR(out_dist[q * k], all[0].first, 1e-4);  // the nearest is found exactly
  }
  const double recall = double(hits) / double(nq * k);
  EXPECT_GE(recall, 0.95);
  // Filter and removal.
  const uint64_t keep[2] = {10, 11};
  ASSERT_EQ(cf_hnsw_search(h, queries.data(), 1, k, 0, keep, 2, 1, out_ids.data(), out_dist.data()),
            CF_OK);
  EXPECT_TRUE(out_ids[0] == 10 || out_ids[0] == 11);
  EXPECT_EQ(out_ids[2], UINT64_MAX);
  ASSERT_EQ(cf_hnsw_remove(h, keep, 1), CF_OK);
  EXPECT_EQ(cf_hnsw_remove(h, keep, 1), CF_ENOTFOUND);
  size_t size = 0;
  ASSERT_EQ(cf_hnsw_size(h, &size), CF_OK);
  EXPECT_EQ(size, n - 1);
  cf_hnsw_free(h);
}

TEST(CapiHnsw, BadArgumentsAreEinval) {
  cf_hnsw_t* h = nullptr;
  EXPECT_EQ(cf_hnsw_new(0, CF_METRIC_COSINE, 0, 0, 1, &h), CF_EINVAL);
  EXPECT_EQ(cf_hnsw_new(4, 9, 0, 0, 1, &h), CF_EINVAL);
  EXPECT_EQ(cf_hnsw_new(4, CF_METRIC_COSINE, 0, 0, 1, nullptr), CF_EINVAL);
  ASSERT_EQ(cf_hnsw_new(4, CF_METRIC_COSINE, 0, 0, 1, &h), CF_OK);
  const uint64_t id = 5;
  const float zero[4] = {0, 0, 0, 0};
  const float nan[4] = {NAN, 1, 1, 1};
  EXPECT_EQ(cf_hnsw_add(h, &id, zero, 1, 1), CF_EINVAL);
  EXPECT_EQ(cf_hnsw_add(h, &id, nan, 1, 1), CF_EINVAL);
  EXPECT_EQ(cf_hnsw_add(h, &id, nullptr, 1, 1), CF_EINVAL);
  EXPECT_EQ(cf_hnsw_add(h, &id, zero, 1, -1), CF_EINVAL);
  const uint64_t pad = UINT64_MAX;
  const float one[4] = {1, 0, 0, 0};
  EXPECT_EQ(cf_hnsw_add(h, &pad, one, 1, 1), CF_EINVAL);
  uint64_t oi[2];
  float od[2];
  EXPECT_EQ(cf_hnsw_search(h, one, 1, 0, 0, nullptr, 0, 1, oi, od), CF_EINVAL);
  EXPECT_EQ(cf_hnsw_search(h, nullptr, 1, 2, 0, nullptr, 0, 1, oi, od), CF_EINVAL);
  EXPECT_EQ(cf_hnsw_search(h, one, 1, 2, 0, nullptr, 0, 1, oi, nullptr), CF_EINVAL);
  size_t size = 1;
  ASSERT_EQ(cf_hnsw_size(h, &size), CF_OK);
  EXPECT_EQ(size, 0u);  // nothing went in
  ASSERT_EQ(cf_hnsw_search(h, one, 1, 2, 0, nullptr, 0, 1, oi, od), CF_OK);  // empty index
  EXPECT_EQ(oi[0], UINT64_MAX);
  EXPECT_TRUE(std::isinf(od[0]));
  cf_hnsw_free(h);
  cf_hnsw_free(nullptr);
}

}  // namespace
