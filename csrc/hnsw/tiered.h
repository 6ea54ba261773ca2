// csrc/hnsw/tiered.h
// Two-tier HNSW (seed spec: HNSW_TIER2_THRESHOLD = 100K, HNSW_DELTA_MERGE_RATIO
// = 10%). Inserts go to the base graph until it holds `threshold` nodes, then
// to a small delta graph. Merge() folds the delta into the base when the delta
// holds more than merge_ratio of the base (or when forced), typically at a
// checkpoint. A query searches both tiers and merges by distance (default) or
// by reciprocal rank fusion, 1 / (60 + rank).
//
// Threading: searches run concurrently with each other and with a running
// Merge(): the merge builds the merged graph beside the live one (a copy of
// the base plus the delta's live nodes) and swaps it in under a short
// exclusive lock. Add and MarkDeleted hold the exclusive lock while they run
// (searches wait for them) and wait for a running merge to finish.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "hnsw/hnsw.h"

namespace chitta::hnsw {

constexpr uint64_t kTier2Threshold = 100000;  // HNSW_TIER2_THRESHOLD
constexpr double kDeltaMergeRatio = 0.10;     // HNSW_DELTA_MERGE_RATIO
constexpr double kRrfK = 60.0;

enum class MergeMode { kDistance, kRrf };

struct TieredOptions {
  Options graph;
  uint64_t threshold = kTier2Threshold;
  double merge_ratio = kDeltaMergeRatio;
};
[[nodiscard]] Status ValidateTieredOptions(const TieredOptions& options);

class TieredIndex {
 public:
  explicit TieredIndex(const TieredOptions& options);  // must pass ValidateTieredOptions
  static Result<std::unique_ptr<TieredIndex>> Create(const TieredOptions& options);

  // Same contract as HnswIndex::Add / MarkDeleted across both tiers.
  [[nodiscard]] Status Add(const uint64_t* ids, const float* vectors, size_t n, int num_threads);
  [[nodiscard]] Status MarkDeleted(const uint64_t* ids, size_t n);
  [[nodiscard]] Status Search(const float* queries, size_t nq, size_t k, size_t ef,
                              const uint64_t* allowed, size_t n_allowed, bool use_filter,
                              MergeMode mode, int num_threads, uint64_t* out_ids,
                              float* out_dist) const;

  // True when the delta holds more than merge_ratio * (live base size) live
  // nodes (any live delta node when the base is empty).
  bool NeedsMerge() const;
  // Merges the delta into the base if NeedsMerge() or force (and the delta is
  // not empty). *merged tells whether it did.
  [[nodiscard]] Status Merge(bool force, int num_threads, bool* merged);

  // rows: as HnswIndex::Save / Load (null: format v1.0 written; v2.0 files
  // read only with rows).
  [[nodiscard]] Status Save(const std::string& base_path, const std::string& delta_path,
                            const RowSource* rows = nullptr) const;
  static Result<std::unique_ptr<TieredIndex>> Load(const std::string& base_path,
                                                   const std::string& delta_path,
                                                   uint64_t threshold, double merge_ratio,
                                                   const RowSource* rows = nullptr);

  const TieredOptions& options() const { return options_; }
  size_t size() const;
  size_t base_size() const;
  size_t delta_size() const;
  size_t merge_count() const;
  bool Contains(uint64_t id) const;
  size_t MemoryBytes() const;

 private:
  Options DeltaOptions(size_t generation) const;
  bool NeedsMergeLocked() const;

  TieredOptions options_;
  mutable std::shared_mutex rw_;  // shared: readers; exclusive: mutation, swap
  std::mutex write_mu_;           // one writer (Add, MarkDeleted, Merge) at a time
  std::shared_ptr<HnswIndex> base_;
  std::shared_ptr<HnswIndex> delta_;
  size_t merges_ = 0;
};

}  // namespace chitta::hnsw
