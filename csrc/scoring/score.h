// csrc/scoring/score.h
// The recall scorer's arithmetic for a batch of candidates, the same
// operations in the same order as chitta/recall/scorer.py's per-candidate
// Scorer.score (which stays the reference and the explanation):
//
//   relevance  = w_fused * fused / best + w_similarity * max(0, cosine)
//   activation = 1 / (1 + exp(-(ln(sum_j max(1, (now - t_j) / 1000) ^ -decay) + 2)))
//   freshness  = (1 - rate) ^ max(0, (now - created) / 86,400,000)
//   context    = 1 - w_a - w_f + w_a * activation + w_f * freshness
//   score      = relevance * context * (0.5 + 0.5 * confidence)
//                * (2 s / (1 + s), s = max(0, strength)) * staged * tier * kind * suppressed
//
// log, exp and pow are the C library's, as Python's math module and float
// power use, and this file is compiled without floating-point contraction,
// so each score is bit-for-bit the Python reference's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chitta/status.h"

namespace chitta::scoring {

struct Weights {
  double w_fused = 1.0;
  double w_similarity = 0.02;
  double w_activation = 0.05;
  double w_freshness = 0.10;
  double freshness_rate = 0.01;  // per day
  double actr_decay = 0.5;
  double staged_multiplier = 0.80;
  double tier_step = 0.25;
};

// Column views of n candidates. cosine is NaN where a candidate has no
// vector. Candidate i's access times are access_ms[access_offsets[i] ..
// access_offsets[i + 1]) (n + 1 offsets, non-decreasing, the last one the
// length of access_ms). kind_weight is each candidate's kind weight.
struct Candidates {
  size_t n = 0;
  const double* fused = nullptr;
  const double* cosine = nullptr;
  const int64_t* created_ms = nullptr;
  const int64_t* access_offsets = nullptr;
  const int64_t* access_ms = nullptr;
  size_t access_len = 0;
  const double* confidence = nullptr;
  const double* strength = nullptr;
  const uint8_t* staged = nullptr;
  const int64_t* tier = nullptr;
  const double* kind_weight = nullptr;
  const double* suppressed = nullptr;
};

// Writes n scores to out. Fails (InvalidArgument) on malformed offsets.
[[nodiscard]] Status ScoreCandidates(const Candidates& c, double best_fused, int64_t now_ms,
                                     const Weights& w, double* out);

}  // namespace chitta::scoring
