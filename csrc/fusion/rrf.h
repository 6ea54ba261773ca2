// csrc/fusion/rrf.h
// Weighted reciprocal rank fusion (Cormack et al., SIGIR 2009), shared by the
// recall lanes (BM25, HNSW tiers, posting index).
//
//   score(d) = sum over lists i that contain d of  w_i / (k + rank_i(d))
//
// rank_i(d) is d's 1-based position in list i (position counts every entry,
// padding included, so ranks match the caller's arrays). An id repeated in
// one list counts once, at its first (best) position. Entries equal to kPadId
// (2^64 - 1) are skipped. Output order: higher score, then smaller best rank
// (minimum over lists), then smaller id — fully deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chitta/status.h"

namespace chitta::fusion {

inline constexpr uint64_t kPadId = ~uint64_t{0};

struct RankedList {
  const uint64_t* ids;
  size_t size;
};

struct FusedResult {
  std::vector<uint64_t> ids;
  std::vector<double> scores;
  // Row-major [ids.size() x n_lists]; 0 = absent from that list. Filled only
  // when requested.
  std::vector<int32_t> ranks;
};

// weights: empty (all 1) or one per list, each finite and >= 0. k finite, >= 0.
// limit: keep only the best `limit` ids (0 = all). Lists longer than
// INT32_MAX entries are refused.
[[nodiscard]] Status RrfFuse(const std::vector<RankedList>& lists, const std::vector<double>& weights,
                             double k, size_t limit, bool want_ranks, FusedResult* out);

}  // namespace chitta::fusion
