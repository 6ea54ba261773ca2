// csrc/recall/word_index.h
// The vocabulary expansion lane's word search (chitta/recall/expand.py): a
// table of word vectors (rows, appended only) and the `want` rows nearest to
// a query by cosine, best first, ties by the smaller row.
//
// Up to `exact_limit` rows the answer is exact: what one f32 dot product per
// row (hnsw/distance.h's kernel, chosen for the CPU) gives, found by an int8
// first pass with error bounds that scores only the rows that can still be
// among the best (word_scan.h). Above the limit an HNSW graph over
// the rows (hnsw::HnswIndex, inner product on the stored rows, beam `ef`)
// finds the candidates and their cosines are recomputed with the same kernel,
// so both paths report the same cosine for a row. Cosine = dot(row, q / |q|):
// the rows are stored as given (the caller gives unit rows; a zero row has
// cosine 0).
//
// Threading: Search and Start may run from any thread at any time, also while
// Add runs. A search reads the table under a shared lock; Add appends under
// the exclusive lock (and builds a new graph outside it), so an add waits for
// the searches in flight and a search sees the table before or after an add,
// never half of one. Start runs the search on hnsw::ProcessSearchWorker(); the
// job holds the table (shared_ptr) and its own copy of the query, so the
// index and the caller's buffer may go away before it ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chitta/status.h"
#include "hnsw/search_worker.h"

namespace chitta::recall {

struct WordHit {
  uint32_t row;
  float cosine;
};

struct WordIndexOptions {
  uint32_t dim = 0;
  size_t exact_limit = 4096;  // above this many rows: the graph
  size_t ef = 64;             // the graph's search beam (raised to want)
  uint32_t M = 16;            // graph build parameters
  uint32_t ef_construction = 200;
  uint64_t seed = 100;
  // Build the graph from the first row on, whatever the size: an index rebuilt
  // in steps (with progress between them) for a table known to be above the
  // limit gets the same graph as one that crossed the limit row by row.
  bool graph_now = false;
};

// A search started by WordIndex::Start: Wait() gives its Status, then hits().
class WordSearch {
 public:
  WordSearch(std::shared_ptr<hnsw::SearchTicket> ticket,
             std::shared_ptr<std::vector<WordHit>> hits)
      : ticket_(std::move(ticket)), hits_(std::move(hits)) {}
  // Runs the search here if the worker has not started it; else waits for it.
  Status Wait() { return ticket_->Wait(); }
  bool done() const { return ticket_->done(); }
  bool ran_on_worker() const { return ticket_->done() && ticket_->ran_on_worker(); }
  const std::vector<WordHit>& hits() const { return *hits_; }  // valid after an OK Wait()

 private:
  std::shared_ptr<hnsw::SearchTicket> ticket_;
  std::shared_ptr<std::vector<WordHit>> hits_;
};

class WordIndex {
 public:
  // InvalidArgument: dim 0 or above hnsw::kMaxDim, ef 0, bad graph parameters.
  static Result<std::unique_ptr<WordIndex>> Create(const WordIndexOptions& options);
  ~WordIndex();
  WordIndex(const WordIndex&) = delete;
  WordIndex& operator=(const WordIndex&) = delete;

  // Appends n rows (n * dim floats, row-major) as rows size() .. size() + n - 1.
  // InvalidArgument (nothing added) on a NaN or infinite value.
  [[nodiscard]] Status Add(const float* rows, size_t n);

  // The min(want, size()) rows of highest cosine with query, best first, ties
  // by the smaller row. InvalidArgument on want < 1 or a query with a NaN /
  // infinite value or no direction (zero).
  [[nodiscard]] Status Search(const float* query, size_t want, std::vector<WordHit>* out) const;

  // Search on the process's search thread. The query is checked and copied
  // here (a bad one is an error now, not at Wait).
  [[nodiscard]] Result<std::shared_ptr<WordSearch>> Start(const float* query, size_t want) const;

  // Saves the graph (csrc/hnsw/FORMAT.md; labels are rows 0 .. m-1, the
  // vectors the rows as stored) to path, written whole (path.tmp, renamed);
  // returns m, the rows it covers. Searches go on meanwhile (shared lock).
  // InvalidArgument when there is no graph; IOError when it cannot write.
  [[nodiscard]] Result<size_t> SaveGraph(const std::string& path) const;

  // An index over rows[0, m) with the graph saved at path, where m is the
  // graph's node count; the caller adds rows m .. n-1 (Add extends the graph).
  // The file is fully checked (hnsw_io) and must be this index's graph of
  // these rows: its dim, inner product, M and ef_construction as in options,
  // no deleted node, node i labelled i, 1 <= m <= n, and node i's vector
  // bit-equal to row i. Else Corruption (CrcMismatch, Unsupported as
  // HnswIndex::Load gives them); IOError when it cannot be read.
  static Result<std::unique_ptr<WordIndex>> LoadGraph(const WordIndexOptions& options,
                                                      const float* rows, size_t n,
                                                      const std::string& path);

  size_t size() const;
  bool has_graph() const;
  const WordIndexOptions& options() const { return options_; }

  struct Table;  // the rows and the graph, shared with the searches in flight

 private:
  explicit WordIndex(const WordIndexOptions& options);
  [[nodiscard]] Status Prepare(const float* query, size_t want, std::vector<float>* unit) const;

  WordIndexOptions options_;
  std::shared_ptr<Table> table_;
};

}  // namespace chitta::recall
