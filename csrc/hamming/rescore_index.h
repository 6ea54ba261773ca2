// csrc/hamming/rescore_index.h
// RescoreIndex: float32 vectors with sign codes beside them. A search takes
// the Hamming top-`candidates` of the query's sign code, then returns the
// top-k of those by exact cosine.
//
// Vectors are L2-normalised on add (stored normalised), queries on search, so
// the dot product is the cosine. Zero and non-finite vectors are refused.
// Codes are the sign bits of (normalised vector - mean). The mean is set by
// SetMean before the first add, or else is the average of the normalised
// vectors of the first non-empty add; it never changes after that (codes made
// against another mean would not compare).
//
// Default candidates: max(400, ceil(n / 1000)) for n live vectors. The 400
// comes from the seed design (top-400 rescored); measured there, 256-bit codes
// with top-400 gave recall@10 0.97 at 100K but 0.90 at 1M, and top-1000 gave
// 0.97 at 1M. Keeping the candidate set at >= 0.1% of n holds recall as n
// grows, at a rescoring cost that stays small beside the O(n) scan.
//
// External rows (Create(..., true)): the index keeps per vector only its code and
// the number of its unit row in a matrix the caller owns (the recall index's),
// added with AddRefs; each Search is given that matrix. No second copy of the
// vectors; the caller keeps a referenced row unchanged until it removes the id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "chitta/status.h"
#include "hamming/code_store.h"

namespace chitta::hamming {

class RescoreIndex {
 public:
  // dim > 0 (at most 65536); candidates 0 means the default rule.
  static Result<std::unique_ptr<RescoreIndex>> Create(size_t dim, size_t candidates,
                                                      bool external_rows = false);
  static size_t DefaultCandidates(size_t n);

  size_t dim() const { return store_.dim(); }
  size_t words() const { return store_.words(); }
  size_t bits() const { return 64 * store_.words(); }
  size_t candidates_setting() const { return candidates_; }
  bool external_rows() const { return store_.external_rows(); }
  size_t EffectiveCandidates() const;  // for the current size
  size_t size() const;
  bool Contains(uint64_t id) const;
  size_t MemoryBytes() const;

  // InvalidArgument if the mean is already fixed or has NaN/inf.
  [[nodiscard]] Status SetMean(const float* mean);
  // Copies the mean to *out; false if none is fixed yet.
  bool GetMean(std::vector<float>* out) const;

  // vectors: n x dim float32. All-or-nothing.
  [[nodiscard]] Status Add(const uint64_t* ids, const float* vectors, size_t n);
  // Adds rows that are already unit length, with their codes made against
  // the fixed mean (a checkpoint's codes.bin: no normalising, no binarising).
  // unit_rows: n x dim, stored as given; codes: n x words, bits past dim 0.
  // InvalidArgument before a mean is fixed, for NaN/inf rows or stray bits.
  [[nodiscard]] Status AddCoded(const uint64_t* ids, const float* unit_rows, const uint64_t* codes,
                                size_t n);
  // External rows only: ids[i]'s unit row is row refs[i] (>= 0) of the matrix each
  // Search is given; codes as AddCoded's. InvalidArgument before a mean is fixed.
  [[nodiscard]] Status AddRefs(const uint64_t* ids, const int64_t* refs, const uint64_t* codes,
                               size_t n);
  [[nodiscard]] Status Remove(const uint64_t* ids, size_t n);

  // queries: nq x dim. Writes nq x k ids and cosines, best first; ties by
  // insertion order. Short rows are padded with kPadId and -inf.
  // candidates 0 means the index setting; k larger than it widens it to k.
  // External rows: matrix is matrix_rows x dim (InvalidArgument if missing or a
  // candidate's row is past it); ignored otherwise.
  [[nodiscard]] Status Search(const float* queries, size_t nq, size_t k, size_t candidates,
                              uint64_t* out_ids, float* out_scores, const float* matrix = nullptr,
                              size_t matrix_rows = 0) const;

  // The Hamming candidate slots' ids for one query (tests: the set that
  // rescoring ranks). Same rules as Search.
  [[nodiscard]] Status CandidateIds(const float* query, size_t candidates,
                                    std::vector<uint64_t>* out) const;

 private:
  RescoreIndex(size_t dim, size_t candidates, bool external_rows)
      : store_(WordsFor(dim), dim, external_rows), candidates_(candidates) {}
  // InvalidArgument for codes with bits set past dim.
  [[nodiscard]] Status CheckCodes(const uint64_t* codes, size_t n) const;
  static size_t WordsFor(size_t dim) { return (dim + 63) / 64; }

  // Checks and normalises queries into *unit; fills their codes.
  [[nodiscard]] Status PrepareQueries(const float* queries, size_t nq, std::vector<float>* unit,
                                      std::vector<uint64_t>* codes) const;
  size_t CandidatesLocked(size_t requested, size_t k) const;

  mutable std::shared_mutex mu_;
  CodeStore store_;
  size_t candidates_;
  std::vector<float> mean_;  // empty until fixed
};

// Dot product with a fixed summation order (8 partial sums).
float Dot(const float* a, const float* b, size_t n);

}  // namespace chitta::hamming
