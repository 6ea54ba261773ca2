// csrc/posting/posting_index.h
// Sparse-code posting index: each memory carries exactly `active` distinct
// feature ids out of `n_features` (default 64 of 16,384) with a float32
// activation per feature. Recall counts, for every memory, how many features it
// shares with the query, using one posting list of ordinals per feature.
//
// Layout (compact on purpose):
//  * a memory's 64-bit id maps to a dense u32 ordinal (IdMap); ordinals are
//    handed out increasingly, so every posting list stays sorted;
//  * per ordinal: its id, a live flag, its feature row (sorted ascending) and,
//    only once some memory has a non-1.0 activation, its activation row;
//  * per feature: a vector of u32 ordinals. Activations are never duplicated
//    into posting entries.
//
// Ranking: overlap count (higher first), then the summed activations of the
// *stored* memory over the shared features, summed in double in ascending
// feature order (higher first), then the smaller ordinal (earlier insertion).
// Results with fewer than k hits are padded with kPadId and count 0.
//
// Removal tombstones an ordinal; Compact() rebuilds rows and posting lists
// without the dead ones and runs automatically once dead ordinals exceed
// compact_fraction of all ordinals. Compaction keeps relative order, so ranks
// (and the ordinal tie-break) do not change.
//
// Thread safety: Search/Contains/size/... may run concurrently with each other;
// Add/Remove/Compact take an exclusive lock, so calls from any threads are safe.
// Nothing here throws on bad input: every fallible call returns a Status and,
// on error, leaves the index unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "chitta/status.h"
#include "posting/feature_rows.h"
#include "posting/id_map.h"

namespace chitta::posting {

struct SearchScratch;  // per-thread counting buffers (posting_search.cc)

inline constexpr uint64_t kPadId = ~uint64_t{0};  // result padding; never a valid id
inline constexpr uint32_t kMaxActive = 255;        // overlap counts fit in a u8
inline constexpr uint32_t kMaxFeatures = 1u << 24;
inline constexpr uint32_t kMaxOrdinals = ~uint32_t{0} - 1;
inline constexpr double kDefaultCompactFraction = 0.25;

struct Options {
  uint32_t n_features = 16384;
  uint32_t active = 64;
  double compact_fraction = kDefaultCompactFraction;  // in (0, 1]
};

// An optional restriction of search results to a set of ids. Ids that are not
// (or no longer) in the index are ignored; duplicates are harmless.
struct AllowedIds {
  const uint64_t* ids = nullptr;
  size_t n = 0;
};

// How a search restricted by AllowedIds finds its candidates. kAuto picks the
// cheaper; the others exist so tests can check that both give the same ranks.
enum class AllowedStrategy { kAuto, kCountPostings, kScanAllowed };

// How the counted ordinals are collected after the counting pass. kTouchedList
// keeps a list of first-touched ordinals (best when few are touched);
// kDenseScan scans the counter array by 64-byte blocks, skipping blocks whose
// maximum is below the k-th largest block maximum (best when many are). kAuto
// picks by the number of postings against the number of ordinals.
enum class CountMode { kAuto, kTouchedList, kDenseScan };

class PostingIndex {
 public:
  static Result<std::unique_ptr<PostingIndex>> Create(const Options& options);

  PostingIndex(const PostingIndex&) = delete;
  PostingIndex& operator=(const PostingIndex&) = delete;

  // Adds n memories. features: n rows of `active` u32 feature ids (any order,
  // distinct, < n_features). activations: n rows of `active` finite floats
  // aligned with the feature rows, or nullptr for all 1.0. Rejects (changing
  // nothing) duplicate ids within the batch or already present, kPadId, bad
  // feature ids, duplicate features in a row, non-finite activations.
  [[nodiscard]] Status Add(const uint64_t* ids, size_t n, const uint32_t* features,
                           const float* activations);

  // Room for `rows` more memories before a bulk Add: the columns, and each
  // feature's posting list for `feature_counts[f]` more ordinals (n_features
  // entries, or nullptr). Adds nothing and changes no result; it only keeps
  // the lists from growing by doubling (copies that, at 100K memories, held
  // the index's largest parts twice at once).
  void Reserve(size_t rows, const uint32_t* feature_counts, bool activations);

  // Tombstones n ids. Unknown (or already removed) id: NotFound; a duplicate
  // within the batch: InvalidArgument. Either way nothing is removed.
  [[nodiscard]] Status Remove(const uint64_t* ids, size_t n);

  // Drops all tombstoned ordinals now.
  void Compact();

  // Top-k for n_queries queries of `width` distinct feature ids each (row
  // major). Writes n_queries * k ids and counts. allowed may be nullptr.
  // num_threads: 0 = automatic, 1 = the calling thread only.
  [[nodiscard]] Status Search(const uint32_t* queries, size_t n_queries, size_t width,
                              size_t k, const AllowedIds* allowed, uint64_t* out_ids,
                              uint32_t* out_counts, unsigned num_threads = 0) const;

  bool Contains(uint64_t id) const;
  size_t size() const;            // live memories
  size_t num_tombstones() const;  // removed but not yet compacted
  size_t MemoryBytes() const;
  // Live ids in ordinal (insertion) order.
  std::vector<uint64_t> LiveIds() const;
  // Copies the stored (sorted) feature row and activation row of `id`.
  [[nodiscard]] Status Get(uint64_t id, uint32_t* features, float* activations) const;

  uint32_t n_features() const { return options_.n_features; }
  uint32_t active() const { return options_.active; }
  // True while every stored activation is 1.0 (no activation rows are kept).
  bool unit_activations() const;

  void set_allowed_strategy_for_test(AllowedStrategy s) { allowed_strategy_ = s; }
  void set_count_mode_for_test(CountMode m) { count_mode_ = m; }

  // Persistence (posting_io.cc, spec in FORMAT.md).
  [[nodiscard]] Status Save(const std::string& path) const;
  static Result<std::unique_ptr<PostingIndex>> Load(const std::string& path);

 private:
  explicit PostingIndex(const Options& options);

  static Status ValidateOptions(const Options& options);
  Status ValidateQueries(const uint32_t* queries, size_t n_queries, size_t width) const;
  void SearchOne(const uint32_t* query, size_t width, size_t k, const uint8_t* allowed_mask,
                 const std::vector<uint32_t>* allowed_ordinals, uint64_t* out_ids,
                 uint32_t* out_counts) const;
  void CollectDense(SearchScratch& s, size_t k, const uint8_t* allowed_mask) const;
  void SelectTopK(SearchScratch& s, const uint32_t* sorted_query, size_t width, size_t k,
                  const uint8_t* allowed_mask, uint64_t* out_ids, uint32_t* out_counts) const;
  double SharedActivation(uint32_t ordinal, const uint32_t* sorted_query, size_t width) const;
  uint32_t Overlap(uint32_t ordinal, const uint32_t* sorted_query, size_t width) const;
  template <typename T>
  double SharedActivationRow(const T* row, const float* act, const uint32_t* q, size_t width) const;
  void CompactLocked();

  Options options_;
  std::vector<std::vector<uint32_t>> postings_;  // feature -> sorted ordinals
  std::vector<uint64_t> ids_;                    // ordinal -> id
  std::vector<uint8_t> live_;                    // ordinal -> 1 live / 0 removed
  FeatureRows features_;                         // ordinal -> sorted feature row (u16 or u32)
  std::vector<float> activations_;               // empty while all are 1.0
  IdMap id_to_ordinal_;                          // live ids only
  size_t num_dead_ = 0;
  AllowedStrategy allowed_strategy_ = AllowedStrategy::kAuto;
  CountMode count_mode_ = CountMode::kAuto;
  mutable std::shared_mutex mu_;
};

}  // namespace chitta::posting
