// csrc/hnsw/test_util.h
// Shared helpers for the HNSW native tests: clustered data, the brute-force
// answer, recall. Tests only.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "hnsw/brute_force.h"
#include "hnsw/hnsw.h"

namespace chitta::hnsw::testing {

// n unit vectors of dim around n_clusters random centres.
inline std::vector<float> Clustered(size_t n, size_t dim, size_t n_clusters, uint64_t seed,
                                    float spread = 0.3f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> centres(n_clusters * dim);
  for (float& c : centres) c = gauss(rng);
  std::vector<float> out(n * dim);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = rng() % n_clusters;
    double norm = 0;
    for (size_t d = 0; d < dim; ++d) {
      float v = centres[c * dim + d] / std::sqrt(static_cast<float>(dim)) +
                spread * gauss(rng) / std::sqrt(static_cast<float>(dim));
      out[i * dim + d] = v;
      norm += v * v;
    }
    for (size_t d = 0; d < dim; ++d) out[i * dim + d] /= static_cast<float>(std::sqrt(norm));
  }
  return out;
}

// nq queries made by perturbing random rows of data (so near neighbours exist).
inline std::vector<float> Near(const std::vector<float>& data, size_t dim, size_t nq,
                               uint64_t seed, float noise = 0.2f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  const size_t n = data.size() / dim;
  std::vector<float> out(nq * dim);
  for (size_t q = 0; q < nq; ++q) {
    const size_t row = rng() % n;
    for (size_t d = 0; d < dim; ++d) {
      out[q * dim + d] = data[row * dim + d] + noise * gauss(rng) / std::sqrt(float(dim));
    }
  }
  return out;
}

inline std::vector<uint64_t> Iota(size_t n, uint64_t start = 0) {
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = start + i;
  return ids;
}

struct Answer {
  std::vector<uint64_t> ids;
  std::vector<float> dist;
};

inline double Recall(const Answer& truth, const Answer& got, size_t nq, size_t k) {
  size_t hit = 0;
  for (size_t q = 0; q < nq; ++q) {
    std::set<uint64_t> t(truth.ids.begin() + q * k, truth.ids.begin() + (q + 1) * k);
    for (size_t j = 0; j < k; ++j) hit += t.count(got.ids[q * k + j]);
  }
  return static_cast<double>(hit) / static_cast<double>(nq * k);
}

}  // namespace chitta::hnsw::testing
