// csrc/hnsw/hnsw.h
// Hierarchical navigable small-world graph (Malkov & Yashunin, 2016/2018),
// written from the paper: layered greedy descent, beam search with ef on each
// layer, the neighbour-selection heuristic (Alg. 4) and shrinking of
// overflowing neighbour lists.
//
// Storage is flat: one contiguous block per node on level 0 holding
// [link count u32][2M links u32][dim floats], labels/levels/flags in parallel
// arrays, and one small array per node with level > 0 ([count][M links] per
// level). Internal ids are u32 in insertion order; callers see u64 labels.
//
// Threading: Search/Contains/size and every const method may run concurrently
// with each other. Add, MarkDeleted and Load mutate and must not overlap any
// other call on the same index (TieredIndex adds the locking that lets searches
// continue during merges). Add itself may use num_threads workers; they
// coordinate through striped per-node locks.
//
// Deleted nodes stay in the graph for navigation and are never returned. The
// label of a deleted node may be added again (it becomes a new node).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chitta/status.h"
#include "hnsw/distance.h"
#include "hnsw/visited.h"

namespace chitta::hnsw {

// Pad value for missing results (ids) — distances are padded with +inf.
constexpr uint64_t kNoId = ~uint64_t{0};
constexpr uint32_t kMaxDim = 65536;
constexpr uint32_t kMaxM = 256;
constexpr int kMaxLevel = 31;

struct Options {
  uint32_t dim = 0;
  uint32_t M = 16;
  uint32_t ef_construction = 200;
  Metric metric = Metric::kCosine;
  uint64_t seed = 100;
};
[[nodiscard]] Status ValidateOptions(const Options& options);

// An allowed-id filter resolved to one index's internal ids (a bitset).
// Ids the index does not hold are ignored.
struct AllowedSet {
  std::vector<uint64_t> bits;
  size_t count = 0;  // live internal ids allowed
  bool Has(uint32_t i) const { return (bits[i >> 6] >> (i & 63)) & 1; }
};

// Vectors a caller already holds, by label: row rows[i] of matrix (n_rows x
// dim floats, row-major) is the vector of ids[i]. The v2.0 file format
// (FORMAT.md) refers to these instead of storing them. The matrix must stay
// alive and unchanged while a Save or Load that uses it runs.
class RowSource {
 public:
  RowSource(const uint64_t* ids, const int64_t* rows, size_t n, const float* matrix,
            size_t n_rows, size_t dim);
  // The row of id, or null when it has none.
  const float* Find(uint64_t id) const;
  size_t dim() const { return dim_; }

 private:
  std::vector<std::pair<uint64_t, int64_t>> sorted_;
  const float* matrix_;
  size_t n_rows_;
  size_t dim_;
};

// A result as (distance, label), smaller distance first.
using Hit = std::pair<float, uint64_t>;

class HnswIndex {
 public:
  explicit HnswIndex(const Options& options);  // options must pass ValidateOptions
  static Result<std::unique_ptr<HnswIndex>> Create(const Options& options);

  // Adds n vectors (row-major, n * dim floats) under the labels ids. Fails with
  // InvalidArgument, changing nothing, on a reserved id (2^64-1), an id given
  // twice, an id already live, a NaN/inf value or (cosine) a zero vector.
  [[nodiscard]] Status Add(const uint64_t* ids, const float* vectors, size_t n, int num_threads);
  // Checks what Add would check, without changing anything.
  [[nodiscard]] Status CheckAdd(const uint64_t* ids, const float* vectors, size_t n) const;
  // Adds vectors that are already prepared (unit length for cosine) and whose
  // ids are already checked; used by merges.
  void AddPrepared(const uint64_t* ids, const float* vectors, size_t n, int num_threads);

  // Marks labels deleted. NotFound (nothing changed) if one is not live;
  // InvalidArgument if one is given twice.
  [[nodiscard]] Status MarkDeleted(const uint64_t* ids, size_t n);
  [[nodiscard]] Status CheckMarkDeleted(const uint64_t* ids, size_t n) const;

  // Batch search: writes nq * k ids and distances, padded with kNoId / +inf.
  // ef is raised to k when smaller. allowed may be null (no filter).
  [[nodiscard]] Status Search(const float* queries, size_t nq, size_t k, size_t ef,
                              const uint64_t* allowed, size_t n_allowed, bool use_filter,
                              int num_threads, uint64_t* out_ids, float* out_dist) const;
  // One prepared query (already normalised for cosine): up to k hits, nearest
  // first. filter may be null.
  void SearchPrepared(const float* query, size_t k, size_t ef, const AllowedSet* filter,
                      std::vector<Hit>* out) const;
  AllowedSet MakeAllowedSet(const uint64_t* allowed, size_t n) const;

  // Writes format v1.0 (every vector stored) when rows is null; else v2.0,
  // where each live node whose stored vector equals its label's row of rows,
  // prepared, is written as a reference to that row.
  [[nodiscard]] Status Save(const std::string& path, const RowSource* rows = nullptr) const;
  // Reads v1.0 or v2.0; the referenced vectors of a v2.0 file come from rows
  // (prepared as Add does, checked against the file's CRC of them). A missing
  // row, a null rows or a CRC mismatch of those vectors is CorruptionError.
  static Result<std::unique_ptr<HnswIndex>> Load(const std::string& path,
                                                 const RowSource* rows = nullptr);
  // Deep copy (graph, vectors, labels, deletions).
  std::unique_ptr<HnswIndex> Clone() const;

  const Options& options() const { return options_; }
  size_t dim() const { return options_.dim; }
  size_t size() const { return label_to_node_.size(); }  // live
  size_t node_count() const { return count_; }           // live + deleted
  size_t capacity() const { return capacity_; }
  bool Contains(uint64_t id) const { return label_to_node_.count(id) != 0; }
  int max_level() const { return max_level_; }
  // The stored (prepared) vector of a live label, or null.
  const float* StoredVector(uint64_t id) const;
  // Calls fn(label, stored vector) for every live node in internal-id order.
  template <typename Fn>
  void ForEachLive(Fn&& fn) const {
    for (uint32_t i = 0; i < count_; ++i) {
      if (!deleted_[i]) fn(labels_[i], VectorOf(i));
    }
  }
  // Heap bytes held by the index (graph, vectors, maps), for benchmarks.
  size_t MemoryBytes() const;
  // Nodes (deleted included) that level 0 cannot reach from the entry point.
  size_t UnreachableCount() const;
  // Test hook: checks graph invariants (link bounds, counts, no self links).
  [[nodiscard]] Status CheckIntegrity() const;

 private:
  struct Candidate {
    float dist;
    uint32_t id;
  };
  struct Closer {  // min-heap order for std::priority_queue
    bool operator()(const Candidate& a, const Candidate& b) const { return a.dist > b.dist; }
  };
  struct Farther {  // max-heap order
    bool operator()(const Candidate& a, const Candidate& b) const { return a.dist < b.dist; }
  };

  char* Block(uint32_t i) const { return level0_.get() + static_cast<size_t>(i) * block_bytes_; }
  uint32_t* Links0(uint32_t i) const { return reinterpret_cast<uint32_t*>(Block(i)); }
  const float* VectorOf(uint32_t i) const {
    return reinterpret_cast<const float*>(Block(i) + links0_bytes_);
  }
  float* MutableVector(uint32_t i) { return reinterpret_cast<float*>(Block(i) + links0_bytes_); }
  // [count][links...] of node i at level (count first).
  uint32_t* Links(uint32_t i, int level) const {
    return level == 0 ? Links0(i) : upper_[i].get() + static_cast<size_t>(level - 1) * (M_ + 1);
  }
  uint32_t MaxLinks(int level) const { return level == 0 ? 2 * M_ : M_; }
  std::mutex& LockFor(uint32_t i) const { return stripes_[i & (kStripes - 1)]; }
  // False while node i (of the batch being added) is still being linked in.
  bool Ready(uint32_t i) const {
    return i < batch_first_ || batch_done_[i - batch_first_].load(std::memory_order_acquire) != 0;
  }
  float Dist(const float* q, uint32_t i) const { return 1.0f - dot_(q, VectorOf(i), options_.dim); }

  void Reserve(size_t n);
  int DrawLevel();
  void InsertNode(uint32_t node);
  uint32_t GreedyDescend(const float* q, uint32_t ep, int from_level, int to_level,
                         bool locked) const;
  std::vector<Candidate> SearchLayerForInsert(const float* q, uint32_t ep, int level,
                                              uint32_t self, VisitedList* visited) const;
  void SelectNeighbors(std::vector<Candidate>* sorted, size_t m) const;
  void Connect(uint32_t from, uint32_t to, int level);
  void SetOwnLinks(uint32_t node, int level, const std::vector<Candidate>& chosen);
  void SearchBase(const float* q, uint32_t ep, size_t ef, const AllowedSet* filter,
                  VisitedList* visited, std::vector<Candidate>* out) const;
  void SearchExact(const float* q, size_t k, const AllowedSet* filter,
                   std::vector<Candidate>* out) const;

  static constexpr size_t kStripes = 1 << 14;

  Options options_;
  uint32_t M_;
  double level_mult_;
  DotFn dot_;
  size_t links0_bytes_;
  size_t block_bytes_;

  size_t capacity_ = 0;
  size_t count_ = 0;
  std::unique_ptr<char[]> level0_;
  std::vector<uint64_t> labels_;
  std::vector<uint8_t> levels_;
  std::vector<uint8_t> deleted_;
  std::vector<std::unique_ptr<uint32_t[]>> upper_;
  std::unordered_map<uint64_t, uint32_t> label_to_node_;

  uint32_t entry_point_ = 0;
  int max_level_ = -1;  // -1: empty graph
  std::mutex entry_mu_;
  uint64_t rng_state_;
  std::unique_ptr<std::mutex[]> stripes_;
  // Nodes [batch_first_, count_) are being inserted by AddPrepared; a done
  // flag per node. Concurrent inserts do not step onto an unfinished node
  // while descending (its lower levels may still be empty).
  uint32_t batch_first_ = std::numeric_limits<uint32_t>::max();
  std::unique_ptr<std::atomic<uint8_t>[]> batch_done_;
  mutable VisitedPool visited_pool_;
};

}  // namespace chitta::hnsw
