// csrc/recall/candidates.cc
#include "recall/candidates.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace chitta::recall {

namespace {

Status PastColumn(const char* what, int64_t row, size_t rows) {
  return Status::InvalidArgument(std::string(what) + " row " + std::to_string(row) +
                                 " is past its columns (" + std::to_string(rows) + " rows)");
}

}  // namespace

Status GatherCandidates(const std::vector<fusion::RankedList>& lists, const std::vector<double>& weights,
                        double k, size_t limit, const MemoryColumns& mem, const IndexColumns& idx,
                        const CosineInputs& cos, Gathered* out) {
  if (mem.map == nullptr || idx.map == nullptr) return Status::InvalidArgument("missing id -> row map");
  fusion::FusedResult fused;
  CHITTA_RETURN_IF_ERROR(fusion::RrfFuse(lists, weights, k, limit, /*want_ranks=*/true, &fused));
  const size_t m = fused.ids.size();
  out->ids = std::move(fused.ids);
  out->fused = std::move(fused.scores);
  out->ranks = std::move(fused.ranks);
  out->lists = lists.size();
  out->keep.clear();
  out->kept_ids.clear();
  out->kept_fused.clear();
  out->created_ms.clear();
  out->confidence.clear();
  out->strength.clear();
  out->tier.clear();
  out->kind_weight.clear();
  out->staged.clear();
  out->vector_row.clear();
  out->cosine.clear();
  for (size_t i = 0; i < m; ++i) {
    const uint64_t id = out->ids[i];
    const int64_t row = mem.map->Row(id);
    if (row < 0) continue;
    if (static_cast<size_t>(row) >= mem.rows) return PastColumn("memories", row, mem.rows);
    if (mem.dead[row]) continue;
    const uint32_t code = mem.kind[row];
    if (code >= mem.kinds) {
      return Status::InvalidArgument("kind code " + std::to_string(code) + " has no weight (" +
                                     std::to_string(mem.kinds) + " kinds)");
    }
    out->keep.push_back(static_cast<uint32_t>(i));
    out->kept_ids.push_back(id);
    out->kept_fused.push_back(out->fused[i]);
    out->created_ms.push_back(mem.created_ms[row]);
    out->confidence.push_back(mem.confidence[row]);
    out->strength.push_back(mem.strength[row]);
    out->tier.push_back(mem.tier[row]);
    out->kind_weight.push_back(mem.kind_weight[code]);
    const int64_t irow = idx.map->Row(id);
    if (irow >= 0 && static_cast<size_t>(irow) >= idx.rows) return PastColumn("index", irow, idx.rows);
    out->staged.push_back(irow >= 0 && idx.staged[irow] ? 1 : 0);
    const int64_t vrow = irow >= 0 ? idx.vector_row[irow] : -1;
    if (cos.dot != nullptr && vrow >= 0) {
      if (static_cast<size_t>(vrow) >= cos.rows) return PastColumn("vector", vrow, cos.rows);
      const char* row = reinterpret_cast<const char*>(cos.units + static_cast<size_t>(vrow) * cos.dim);
      for (size_t b = 0; b < cos.dim * sizeof(float); b += 64) __builtin_prefetch(row + b);
    }
    out->vector_row.push_back(vrow);
  }
  if (cos.dot != nullptr) {  // after the gather: the rows' prefetches are in flight
    const size_t n = out->vector_row.size();
    out->cosine.assign(n, std::nan(""));
    for (size_t j = 0; j < n; ++j) {
      const int64_t vrow = out->vector_row[j];
      if (vrow < 0) continue;
      const float* row = cos.units + static_cast<size_t>(vrow) * cos.dim;
      out->cosine[j] = static_cast<double>(cos.dot(static_cast<int64_t>(cos.dim), row, 1, cos.query, 1));
    }
  }
  return Status::OK();
}

Status Rank(const Gathered& g, const RankInputs& in, double best_fused, int64_t now_ms,
            const scoring::Weights& w, size_t k, std::vector<double>* scores, std::vector<uint32_t>* top) {
  const size_t n = g.kept_ids.size();
  // Access traces: the creation time, then the recorded accesses.
  std::vector<int64_t> offsets(n + 1);
  std::vector<int64_t> access;
  if (in.trace_offsets == nullptr) {
    std::iota(offsets.begin(), offsets.end(), int64_t{0});
    access = g.created_ms;
  } else {
    if (in.trace_offsets[0] != 0) return Status::InvalidArgument("trace offsets must start at 0");
    access.reserve(n + in.trace_len);
    for (size_t i = 0; i < n; ++i) {
      const int64_t lo = in.trace_offsets[i], hi = in.trace_offsets[i + 1];
      if (hi < lo || static_cast<uint64_t>(hi) > in.trace_len) {
        return Status::InvalidArgument("trace offsets out of order or past the traces (candidate " +
                                       std::to_string(i) + ")");
      }
      offsets[i] = static_cast<int64_t>(access.size());
      access.push_back(g.created_ms[i]);
      access.insert(access.end(), in.trace_ms + lo, in.trace_ms + hi);
    }
    offsets[n] = static_cast<int64_t>(access.size());
  }
  std::vector<double> nan_cosine, ones;
  const double* cosine = in.cosine != nullptr ? in.cosine : (g.cosine.size() == n ? g.cosine.data() : nullptr);
  if (cosine == nullptr) nan_cosine.assign(n, std::nan(""));
  if (in.suppressed == nullptr) ones.assign(n, 1.0);
  scoring::Candidates c;
  c.n = n;
  c.fused = in.fused != nullptr ? in.fused : g.kept_fused.data();
  c.cosine = cosine != nullptr ? cosine : nan_cosine.data();
  c.created_ms = g.created_ms.data();
  c.access_offsets = offsets.data();
  c.access_ms = access.data();
  c.access_len = access.size();
  c.confidence = g.confidence.data();
  c.strength = g.strength.data();
  c.staged = g.staged.data();
  c.tier = g.tier.data();
  c.kind_weight = g.kind_weight.data();
  c.suppressed = in.suppressed != nullptr ? in.suppressed : ones.data();
  scores->assign(n, 0.0);
  CHITTA_RETURN_IF_ERROR(scoring::ScoreCandidates(c, best_fused, now_ms, w, scores->data()));
  // numpy's lexsort((ids, -scores)): -score ascending with NaN last, then id.
  const double* s = scores->data();
  const uint64_t* ids = g.kept_ids.data();
  auto before = [s, ids](uint32_t a, uint32_t b) {
    const double ka = -s[a], kb = -s[b];
    const bool na = std::isnan(ka), nb = std::isnan(kb);
    if (na != nb) return nb;
    if (!na && ka != kb) return ka < kb;
    return ids[a] < ids[b];
  };
  top->resize(n);
  std::iota(top->begin(), top->end(), 0u);
  const size_t m = std::min(k, n);
  std::partial_sort(top->begin(), top->begin() + m, top->end(), before);
  top->resize(m);
  return Status::OK();
}

}  // namespace chitta::recall
