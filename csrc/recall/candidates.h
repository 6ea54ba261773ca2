// csrc/recall/candidates.h
// The recall pipeline's per-query tail in one place, native: the lanes'
// ranked id lists -> weighted RRF (fusion/rrf.h) -> each fused candidate's
// scoring state gathered from the organs' columns (through their id -> row
// maps) -> scores (scoring/score.h) -> the best k, ordered by score
// (descending) then id (ascending). chitta/recall/engine.py runs it; its
// Python path (explain=True) is the reference, and the two agree id for id
// and bit for bit (tests/unit/recall/test_recall_native.py).
//
// Cosines: the reference is numpy's float32 dot of the candidate's unit row
// and the query (float(row @ query)), which numpy hands to its BLAS's
// cblas_sdot. GatherCandidates computes them by calling that same function
// (its address found and checked by chitta/recall/native_dot.py), so every
// score stays bit-for-bit the reference's; without it the caller computes
// them with numpy and passes them to Rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chitta/status.h"
#include "fusion/rrf.h"
#include "scoring/score.h"
#include "util/row_map.h"

namespace chitta::recall {

// The memories organ's columns (chitta/organs/memories_store.py), by its row.
// `rows` is how many rows every column holds (at least the map's size).
struct MemoryColumns {
  const util::RowMap* map = nullptr;
  size_t rows = 0;
  const uint8_t* dead = nullptr;
  const int64_t* created_ms = nullptr;
  const double* confidence = nullptr;
  const double* strength = nullptr;
  const int64_t* tier = nullptr;
  const uint32_t* kind = nullptr;  // label codes
  const double* kind_weight = nullptr;  // by label code
  size_t kinds = 0;
};

// The recall-index organ's columns (chitta/organs/recall_rows.py), by its row.
struct IndexColumns {
  const util::RowMap* map = nullptr;
  size_t rows = 0;
  const uint8_t* staged = nullptr;
  const int64_t* vector_row = nullptr;  // row in the dense lane's matrix, -1: none
};

// A cblas_sdot with 64-bit integers (OpenBLAS ILP64; numpy's own).
using DotFn = float (*)(int64_t n, const float* x, int64_t incx, const float* y, int64_t incy);

// The query and the dense lane's unit rows, for the candidates' cosines.
struct CosineInputs {
  DotFn dot = nullptr;  // nullptr: no cosines gathered
  const float* query = nullptr;
  size_t dim = 0;
  const float* units = nullptr;  // [rows x dim], row-major
  size_t rows = 0;
};

// What GatherCandidates found. The fused list (at most `limit` ids, best
// first) is kept whole for the lanes' ranks; the live ones among them
// ("kept", in fused order) carry their scoring state.
struct Gathered {
  std::vector<uint64_t> ids;     // fused order
  std::vector<double> fused;     // their RRF scores
  std::vector<int32_t> ranks;    // [ids x lists], 1-based, 0: absent
  size_t lists = 0;
  std::vector<uint32_t> keep;    // positions in `ids` of the live candidates
  // One entry per kept candidate:
  std::vector<uint64_t> kept_ids;
  std::vector<double> kept_fused;
  std::vector<int64_t> created_ms;
  std::vector<double> confidence;
  std::vector<double> strength;
  std::vector<int64_t> tier;
  std::vector<double> kind_weight;
  std::vector<uint8_t> staged;
  std::vector<int64_t> vector_row;  // -1: no vector (cosine NaN)
  std::vector<double> cosine;       // when CosineInputs gave a dot: NaN where no vector
};

// Fuses `lists` (weights one per list, rrf constant k, keep the best `limit`;
// as fusion::RrfFuse) and gathers the state of the live candidates: live =
// present in the memories map and not dead there. staged and vector_row come
// from the index map (false / -1 where it lacks the id). With cos.dot, each
// kept candidate's cosine: dot(dim, units[vector_row], 1, query, 1) widened
// to double, NaN without a vector. InvalidArgument when a row or label code
// points past its column (a vector row past `units` too).
[[nodiscard]] Status GatherCandidates(const std::vector<fusion::RankedList>& lists,
                                      const std::vector<double>& weights, double k, size_t limit,
                                      const MemoryColumns& memories, const IndexColumns& index,
                                      const CosineInputs& cos, Gathered* out);

// Per-query inputs of Rank beside the gathered state. Any pointer may be null:
// fused -> the gathered kept_fused; cosine -> the gathered cosines, else all
// NaN; suppressed -> all 1;
// traces -> no access beyond creation. Otherwise one value per kept candidate
// (traces: n + 1 offsets into trace_ms, each candidate's access times after
// its creation time, as chitta.recall.scorer.CandidateView.access_ms).
struct RankInputs {
  const double* fused = nullptr;
  const double* cosine = nullptr;
  const double* suppressed = nullptr;
  const int64_t* trace_offsets = nullptr;
  const int64_t* trace_ms = nullptr;
  size_t trace_len = 0;
};

// Scores every kept candidate (scoring::ScoreCandidates, so bit-for-bit
// chitta.recall.scorer.Scorer.score) and writes to `top` the positions (into
// the kept candidates) of the best `k`, by score descending (NaN last) then
// id ascending: numpy's lexsort((ids, -scores))[:k]. `scores` gets every kept
// candidate's score.
[[nodiscard]] Status Rank(const Gathered& g, const RankInputs& in, double best_fused, int64_t now_ms,
                          const scoring::Weights& w, size_t k, std::vector<double>* scores,
                          std::vector<uint32_t>* top);

}  // namespace chitta::recall
