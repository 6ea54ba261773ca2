// csrc/hnsw/brute_force.h
// BruteForceIndex: the exact nearest-neighbour oracle for HNSW tests and
// benchmarks, with the same vector rules (metric, normalisation, checks) and
// the same search contract (k results nearest first, ties by smaller id,
// padded with kNoId / +inf, optional allowed-id filter). Searches are const
// and may run concurrently; Add/MarkDeleted must not overlap other calls.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "chitta/status.h"
#include "hnsw/distance.h"
#include "hnsw/hnsw.h"

namespace chitta::hnsw {

class BruteForceIndex {
 public:
  BruteForceIndex(uint32_t dim, Metric metric);  // dim checked by Create
  static Result<std::unique_ptr<BruteForceIndex>> Create(uint32_t dim, Metric metric);

  [[nodiscard]] Status Add(const uint64_t* ids, const float* vectors, size_t n);
  [[nodiscard]] Status MarkDeleted(const uint64_t* ids, size_t n);
  [[nodiscard]] Status Search(const float* queries, size_t nq, size_t k, const uint64_t* allowed,
                              size_t n_allowed, bool use_filter, int num_threads,
                              uint64_t* out_ids, float* out_dist) const;

  size_t dim() const { return dim_; }
  Metric metric() const { return metric_; }
  size_t size() const { return labels_.size(); }
  bool Contains(uint64_t id) const { return slot_.count(id) != 0; }

 private:
  uint32_t dim_;
  Metric metric_;
  DotFn dot_;
  std::vector<float> vectors_;  // size() rows, prepared
  std::vector<uint64_t> labels_;
  std::unordered_map<uint64_t, size_t> slot_;
};

}  // namespace chitta::hnsw
