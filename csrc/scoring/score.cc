// csrc/scoring/score.cc
#include "scoring/score.h"

#include <cmath>
#include <string>

namespace chitta::scoring {

namespace {

constexpr double kMsPerDay = 86'400'000.0;

// factors.activation over one access trace.
double Activation(const int64_t* times, size_t count, int64_t now_ms, double decay) {
  const double nd = -decay;
  double total = 0.0;
  for (size_t j = 0; j < count; ++j) {
    const double age = static_cast<double>(now_ms - times[j]) / 1000.0;
    total += std::pow(age < 1.0 ? 1.0 : age, nd);
  }
  if (!(total > 0)) return 0.0;
  return 1.0 / (1.0 + std::exp(-(std::log(total) + 2.0)));
}

}  // namespace

Status ScoreCandidates(const Candidates& c, double best_fused, int64_t now_ms, const Weights& w,
                       double* out) {
  if (c.n > 0 && c.access_offsets[0] != 0) {
    return Status::InvalidArgument("access offsets must start at 0");
  }
  for (size_t i = 0; i < c.n; ++i) {
    const int64_t lo = c.access_offsets[i], hi = c.access_offsets[i + 1];
    if (hi < lo || static_cast<uint64_t>(hi) > c.access_len) {
      return Status::InvalidArgument("access offsets out of order or past the access times (candidate " +
                                     std::to_string(i) + ")");
    }
  }
  const double base = 1.0 - w.freshness_rate;
  for (size_t i = 0; i < c.n; ++i) {
    const double fused = best_fused > 0 ? c.fused[i] / best_fused : 0.0;
    const double cos = c.cosine[i];
    const double similarity = std::isnan(cos) ? 0.0 : (cos > 0.0 ? cos : 0.0);
    double score = w.w_fused * fused + w.w_similarity * similarity;
    const int64_t lo = c.access_offsets[i], hi = c.access_offsets[i + 1];
    const double act = Activation(c.access_ms + lo, static_cast<size_t>(hi - lo), now_ms, w.actr_decay);
    double age_days = static_cast<double>(now_ms - c.created_ms[i]) / kMsPerDay;
    if (age_days < 0.0) age_days = 0.0;
    const double fresh = std::pow(base, age_days);
    const double context =
        1.0 - w.w_activation - w.w_freshness + w.w_activation * act + w.w_freshness * fresh;
    const double strength = c.strength[i] > 0.0 ? c.strength[i] : 0.0;
    const int64_t tier = c.tier[i] > 0 ? c.tier[i] : 0;
    score *= context;
    score *= 0.5 + 0.5 * c.confidence[i];
    score *= 2.0 * strength / (1.0 + strength);
    score *= c.staged[i] ? w.staged_multiplier : 1.0;
    score *= 1.0 / (1.0 + w.tier_step * static_cast<double>(tier));
    score *= c.kind_weight[i];
    score *= c.suppressed[i];
    out[i] = score;
  }
  return Status::OK();
}

}  // namespace chitta::scoring
