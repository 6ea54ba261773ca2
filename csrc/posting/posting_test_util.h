// csrc/posting/posting_test_util.h
// Test-only helpers: a brute-force model of the posting index (the oracle) and
// random data with many ties. Used by posting_*_test.cc only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "posting/posting_index.h"

namespace chitta::posting::testing {

struct ModelEntry {
  uint64_t id;
  std::vector<uint32_t> features;  // sorted
  std::vector<float> activations;  // aligned with features
  bool live;
};

// Every memory ever added, in insertion (ordinal) order.
class Model {
 public:
  void Add(uint64_t id, std::vector<uint32_t> f, std::vector<float> act) {
    std::vector<size_t> perm(f.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    std::sort(perm.begin(), perm.end(), [&](size_t x, size_t y) { return f[x] < f[y]; });
    ModelEntry e{id, {}, {}, true};
    for (size_t p : perm) {
      e.features.push_back(f[p]);
      e.activations.push_back(act[p]);
    }
    entries_.push_back(std::move(e));
  }
  void Remove(uint64_t id) {
    for (auto& e : entries_) {
      if (e.live && e.id == id) e.live = false;
    }
  }
  size_t size() const {
    return static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(),
                                             [](const ModelEntry& e) { return e.live; }));
  }
  const std::vector<ModelEntry>& entries() const { return entries_; }

  // Brute force: overlap, then summed stored activation (double, ascending
  // feature order), then insertion order. allowed == nullptr: no restriction.
  void Search(const std::vector<uint32_t>& query, size_t k, const std::vector<uint64_t>* allowed,
              std::vector<uint64_t>* ids, std::vector<uint32_t>* counts) const {
    struct Hit {
      size_t pos;
      uint32_t count;
      double sum;
    };
    std::vector<uint32_t> q = query;
    std::sort(q.begin(), q.end());
    std::vector<Hit> hits;
    for (size_t pos = 0; pos < entries_.size(); ++pos) {
      const ModelEntry& e = entries_[pos];
      if (!e.live) continue;
      if (allowed && std::find(allowed->begin(), allowed->end(), e.id) == allowed->end()) continue;
      uint32_t c = 0;
      double sum = 0;
      for (size_t j = 0; j < e.features.size(); ++j) {
        if (std::binary_search(q.begin(), q.end(), e.features[j])) {
          ++c;
          sum += e.activations[j];
        }
      }
      if (c > 0) hits.push_back({pos, c, sum});
    }
    std::stable_sort(hits.begin(), hits.end(), [](const Hit& x, const Hit& y) {
      if (x.count != y.count) return x.count > y.count;
      return x.sum > y.sum;
    });
    ids->assign(k, kPadId);
    counts->assign(k, 0);
    for (size_t r = 0; r < k && r < hits.size(); ++r) {
      (*ids)[r] = entries_[hits[r].pos].id;
      (*counts)[r] = hits[r].count;
    }
  }

 private:
  std::vector<ModelEntry> entries_;
};

// A random code of `active` distinct features out of `n_features`.
inline std::vector<uint32_t> RandomCode(std::mt19937_64& rng, uint32_t n_features,
                                        uint32_t active) {
  std::vector<uint32_t> all(n_features);
  for (uint32_t i = 0; i < n_features; ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(active);
  return all;
}

// Activations from a tiny set of quarter values, so sums tie often and are exact.
inline std::vector<float> RandomActivations(std::mt19937_64& rng, uint32_t active) {
  std::vector<float> act(active);
  for (auto& v : act) v = 0.25f * static_cast<float>(rng() % 4 + 1);
  return act;
}

}  // namespace chitta::posting::testing
